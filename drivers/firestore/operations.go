package firestore

import "github.com/anysqs/anysqs/capabilities"

// ---- Operational properties (capabilities.Operations) -------------------------------
// Shown first on the compatibility page and in the console, to help choose a backend.
// Kept apart from the capability declarations in describe.go so that each changes alone.

func operations() capabilities.Operations {
	return capabilities.Operations{
		RunsWhere:    "Gateways anywhere with Google Cloud credentials; documents in a Firestore database, with composite indexes.",
		ScaleOut:     "Any number of gateways on one database; another gateway's send reaches a waiting receive within poll_interval (1 s by default).",
		Durability:   "Answers after Firestore's commit, replicated across zones (or regions).",
		Availability: "Firestore's, regional or multi-region, serverless; gateways are stateless.",
		Ordering:     "Standard: no order guarantee. FIFO: strict order per message group.",
		Throughput:   "Serverless, bounded per index shard and per FIFO group (a few messages/s each); unmeasured on a real database here.",
		CostDrivers:  "Document reads, writes and deletes per call, and storage.",
	}
}
