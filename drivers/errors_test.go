package drivers_test

import (
	"testing"

	"github.com/anysqs/anysqs/drivers"
)

// TestKindValues pins each kind's number and name: plugins send kinds across a process
// boundary as numbers, so appending a kind must never renumber the others.
func TestKindValues(t *testing.T) {
	want := []string{"Unknown", "NotFound", "AlreadyExists", "InvalidArgument", "Unsupported",
		"FailedPrecondition", "PurgeInProgress", "InvalidReceiptHandle", "MessageNotInflight",
		"Throttled", "Unavailable", "Internal", "DeletedRecently", "OverLimit", "Aborted",
		"StaleReceiptHandle"}
	for i, name := range want {
		if got := drivers.Kind(i).String(); got != name {
			t.Errorf("Kind(%d) = %s, want %s", i, got, name)
		}
	}
	if got := drivers.Kind(-1).String(); got != "Kind(-1)" {
		t.Errorf("Kind(-1) = %s", got)
	}
}
