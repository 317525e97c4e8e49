package spanner_test

import (
	"testing"

	"github.com/anysqs/anysqs/drivers/drivertest"
	"github.com/anysqs/anysqs/drivers/spanner"
)

// TestOptionsDocumented: every option is named in the package documentation and the
// operator's guide.
func TestOptionsDocumented(t *testing.T) {
	drivertest.OptionsDocumented(t, spanner.Options{}, "doc.go", "../../docs/backends/spanner.md")
}
