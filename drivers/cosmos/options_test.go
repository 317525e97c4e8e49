package cosmos_test

import (
	"testing"

	"github.com/anysqs/anysqs/drivers/cosmos"
	"github.com/anysqs/anysqs/drivers/drivertest"
)

// TestOptionsDocumented: every option is named in the package documentation and the
// operator's guide.
func TestOptionsDocumented(t *testing.T) {
	drivertest.OptionsDocumented(t, cosmos.Options{}, "doc.go", "../../docs/backends/cosmos.md")
}
