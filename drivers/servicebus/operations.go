package servicebus

import "github.com/anysqs/anysqs/capabilities"

// ---- Operational properties (capabilities.Operations) -------------------------------
// Shown first on the compatibility page and in the console, to help choose a backend.
// Kept apart from the capability declarations in describe.go so that each changes alone.

func operations() capabilities.Operations {
	return capabilities.Operations{
		RunsWhere:    "Gateways anywhere that reach a Service Bus namespace; one queue entity per SQS queue.",
		ScaleOut:     "Any number of gateways on one namespace, but a receipt handle works only on the gateway that received it.",
		Durability:   "Answers once the broker accepts the message: Service Bus's replicated store.",
		Availability: "Service Bus's (zones on Premium); a gateway's restart releases its locks, and those messages reappear.",
		Ordering:     "Standard: the broker's order, not guaranteed. FIFO: sessions, strict order per message group.",
		Throughput:   "The namespace tier: shared on Standard, messaging units on Premium.",
		CostDrivers:  "The tier: operations on Standard, messaging units per hour on Premium.",
	}
}
