package capabilities

import (
	"slices"
	"testing"
)

// TestRejectCodesAreSQSCodes: the gateway renders RejectCode through its error table, where
// a code it does not know would become InternalError.
func TestRejectCodesAreSQSCodes(t *testing.T) {
	for _, e := range catalog {
		if !slices.Contains(sqsCodes, e.RejectCode) {
			t.Errorf("%s: reject code %q is not an SQS code of gateway/sqserr/errors.json", e.ID, e.RejectCode)
		}
	}
}
