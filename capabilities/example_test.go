package capabilities_test

import (
	"fmt"

	"github.com/anysqs/anysqs/capabilities"
)

// The gateway builds one Policy at start-up and one Trace per request; each check is one
// line at the call site.
func ExampleTrace() {
	decls := allNative()
	for i := range decls {
		if decls[i].ID == capabilities.DelayMessage {
			decls[i].Level, decls[i].Note = capabilities.Degraded, "the queue's delay applies"
		}
	}
	pol, err := capabilities.NewPolicy("sqlite", decls, capabilities.Config{Mode: "degrade"})
	if err != nil {
		fmt.Println(err)
		return
	}
	tr := pol.Trace("orders")
	if d := tr.Decide(capabilities.DelayMessage); d.Reject {
		fmt.Println("reject:", d.Code, d.Message)
		return
	}
	for _, id := range tr.FirstDegraded() {
		fmt.Println("log once:", id, "degraded on orders")
	}
	for _, h := range tr.Headers(capabilities.ExplainRequested("1")) {
		fmt.Printf("%s: %s\n", h.Name, h.Value)
	}
	// Output:
	// log once: delay.message degraded on orders
	// X-Anysqs-Backend: sqlite
	// X-Anysqs-Degraded: delay.message
	// X-Anysqs-Explain: delay.message=degraded:degrade
}
