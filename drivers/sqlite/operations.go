package sqlite

import "github.com/anysqs/anysqs/capabilities"

// ---- Operational properties (capabilities.Operations) -------------------------------
// Shown first on the compatibility page and in the console, to help choose a backend.
// Kept apart from the capability declarations in describe.go so that each changes alone.

func operations() capabilities.Operations {
	return capabilities.Operations{
		RunsWhere:    "Inside the gateway process: one database file in data_dir. Nothing to set up.",
		ScaleOut:     "One gateway per data directory (the file is locked by its process); scale up, not out.",
		Durability:   "Answers after the WAL commit on local disk; the disk is the only copy. data_dir \":memory:\" keeps nothing.",
		Availability: "That one process and its disk: a restart is an outage; a lost disk loses the queues.",
		Ordering:     "Standard: earliest visible first, best effort as in SQS. FIFO: strict order per message group.",
		Throughput:   "One writer on one disk: thousands of messages/s in batches, single-machine bound.",
		CostDrivers:  "The machine and its disk only.",
	}
}
