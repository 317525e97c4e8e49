package servicebus_test

import (
	"testing"

	"github.com/anysqs/anysqs/drivers/drivertest"
	"github.com/anysqs/anysqs/drivers/servicebus"
)

// TestOptionsDocumented: every option is named in the package documentation and the
// operator's guide.
func TestOptionsDocumented(t *testing.T) {
	drivertest.OptionsDocumented(t, servicebus.Options{}, "doc.go", "../../docs/backends/servicebus.md")
}
