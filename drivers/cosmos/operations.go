package cosmos

import "github.com/anysqs/anysqs/capabilities"

// ---- Operational properties (capabilities.Operations) -------------------------------
// Shown first on the compatibility page and in the console, to help choose a backend.
// Kept apart from the capability declarations in describe.go so that each changes alone.

func operations() capabilities.Operations {
	return capabilities.Operations{
		RunsWhere:    "Gateways anywhere that reach a Cosmos DB account; items in one container, one partition per queue.",
		ScaleOut:     "Any number of gateways on one container; another gateway's send reaches a waiting receive within poll_interval (1 s by default).",
		Durability:   "Answers after Cosmos DB's write, under the account's consistency level.",
		Availability: "Cosmos DB's (zones, regions); gateways are stateless. Dead-letter moves are at least once.",
		Ordering:     "Standard: no order guarantee. FIFO: strict order per message group.",
		Throughput:   "Provisioned or serverless RU/s; one queue is one logical partition (about 10,000 RU/s at most).",
		CostDrivers:  "Request units per call (provisioned or consumed), and storage.",
	}
}
