package spanner

import "github.com/anysqs/anysqs/capabilities"

// ---- Operational properties (capabilities.Operations) -------------------------------
// Shown first on the compatibility page and in the console, to help choose a backend.
// Kept apart from the capability declarations in describe.go so that each changes alone.

func operations() capabilities.Operations {
	return capabilities.Operations{
		RunsWhere:    "Gateways anywhere with Google Cloud credentials; tables in a Cloud Spanner database.",
		ScaleOut:     "Any number of gateways on one database; another gateway's send reaches a waiting receive within poll_interval (1 s by default).",
		Durability:   "Answers after Spanner's synchronously replicated commit.",
		Availability: "Cloud Spanner's, regional or multi-region; gateways are stateless.",
		Ordering:     "Standard: no order (keys are random ids). FIFO: strict order per message group.",
		Throughput:   "Grows with nodes or processing units; unmeasured on a real instance here.",
		CostDrivers:  "Nodes or processing units, storage, and commits per call.",
	}
}
