package plugin_test

import (
	"testing"

	"github.com/anysqs/anysqs/drivers/drivertest"
	"github.com/anysqs/anysqs/drivers/plugin"
)

// TestOptionsDocumented: every option is named in the package documentation and the
// operator's guide.
func TestOptionsDocumented(t *testing.T) {
	drivertest.OptionsDocumented(t, plugin.Options{}, "doc.go", "../../docs/plugins.md")
}
