package postgres

import "github.com/anysqs/anysqs/capabilities"

// ---- Operational properties (capabilities.Operations) -------------------------------
// Shown first on the compatibility page and in the console, to help choose a backend.
// Kept apart from the capability declarations in describe.go so that each changes alone.

func operations() capabilities.Operations {
	return capabilities.Operations{
		RunsWhere:    "Gateways anywhere that reach a PostgreSQL server (yours or managed); tables in one schema.",
		ScaleOut:     "Any number of gateways on one database; long polls woken at once through LISTEN/NOTIFY.",
		Durability:   "Answers after the transaction commits: as durable as the server (fsync, replication).",
		Availability: "The database's high availability (replicas, failover); gateways are stateless and roll one by one.",
		Ordering:     "Standard: earliest visible first, best effort as in SQS. FIFO: strict order per message group.",
		Throughput:   "One database server: thousands to tens of thousands of messages/s; figures in docs/backends/postgres.md.",
		CostDrivers:  "The database server (CPU, IOPS, storage) and its connections.",
	}
}
