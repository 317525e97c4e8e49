package migrate

import (
	"context"
	"time"

	"github.com/anysqs/anysqs/drivers"
)

// BrowseAll calls fn with every message of queue name, page by page, as a migration
// reads them.
func BrowseAll(ctx context.Context, d drivers.Driver, name string, fn func(drivers.BrowsedMessage)) error {
	return browse(ctx, d, name, time.Now, func(b drivers.BrowsedMessage) bool { fn(b); return true })
}
