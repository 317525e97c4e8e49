package cosmos

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/anysqs/anysqs/drivers"
)

// TestPackedFitsItem: a 1 MiB message whose JSON escaping doubles its size, or that is
// all '<' (six bytes each with HTML escaping), is stored under the 2 MB item limit and
// reads back unchanged.
func TestPackedFitsItem(t *testing.T) {
	const itemLimit = 2 * 1024 * 1024
	for _, tc := range []struct {
		name  string
		body  string
		attrs map[string]drivers.MessageAttribute
	}{
		{"quotes", strings.Repeat(`"`, 1<<20), nil},
		{"angle brackets", strings.Repeat("<", 1<<20), nil},
		{"body and attributes", strings.Repeat(`\`, 600<<10), map[string]drivers.MessageAttribute{
			"s": {DataType: "String", StringValue: strings.Repeat(`"`, 200<<10)},
			"b": {DataType: "Binary", BinaryValue: make([]byte, 200<<10)}}},
		{"plain", strings.Repeat("a", 1<<20), nil},
	} {
		m := msgDoc{ID: "m:x", PK: "q/x/y", Kind: "msg", MID: "x", Body: tc.body, Attrs: tc.attrs}
		b := mustJSON(m)
		if len(b) >= itemLimit {
			t.Errorf("%s: item is %d bytes, over the 2 MB limit", tc.name, len(b))
			continue
		}
		var back msgDoc
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		back, err := back.unpacked()
		if err != nil {
			t.Fatal(err)
		}
		if back.Body != tc.body || len(back.Attrs) != len(tc.attrs) {
			t.Errorf("%s: body or attributes changed on the way back", tc.name)
		}
		for k, a := range tc.attrs {
			if back.Attrs[k].StringValue != a.StringValue || len(back.Attrs[k].BinaryValue) != len(a.BinaryValue) {
				t.Errorf("%s: attribute %s changed on the way back", tc.name, k)
			}
		}
		t.Logf("%s: %d bytes stored", tc.name, len(b))
	}
}
