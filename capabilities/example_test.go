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

// A driver's declarations, one line each.
func ExampleLevel_Declare() {
	native, degraded := capabilities.Native.Declare, capabilities.Degraded.Declare
	for _, d := range []capabilities.Declaration{
		native(capabilities.DelayQueue, "", "max_seconds", "900"),
		degraded(capabilities.AttrKMS, "stored and returned; messages are not encrypted with a KMS key"),
	} {
		fmt.Printf("%s %s %v %q\n", d.ID, d.Level, d.Limits, d.Note)
	}
	// Output:
	// delay.queue native map[max_seconds:900] ""
	// attribute.KmsMasterKeyId degraded map[] "stored and returned; messages are not encrypted with a KMS key"
}
