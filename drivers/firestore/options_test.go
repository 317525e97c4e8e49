package firestore_test

import (
	"testing"

	"github.com/anysqs/anysqs/drivers/drivertest"
	"github.com/anysqs/anysqs/drivers/firestore"
)

// TestOptionsDocumented: every option is named in the package documentation and the
// operator's guide.
func TestOptionsDocumented(t *testing.T) {
	drivertest.OptionsDocumented(t, firestore.Options{}, "doc.go", "../../docs/backends/firestore.md")
}
