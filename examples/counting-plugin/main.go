// Command counting-plugin is an example of a third-party anysqs driver plugin, built
// outside the anysqs module: the SQLite driver of anysqs, counting the messages it
// stores and exporting the count as a metric of its own. A real plugin would open its
// own backend in open; the plumbing is the same.
//
// Build it, then configure the gateway with
//
//	backend:
//	  name: plugin
//	  options:
//	    path: /usr/local/lib/anysqs/counting-plugin
//	    checksum: sha256:<sha256sum of that file>
//	    config: {data_dir: /var/lib/anysqs}
package main

import (
	"context"
	"sync/atomic"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/plugin"
	"github.com/anysqs/anysqs/drivers/sqlite"
)

func main() { plugin.Serve(open) }

// Options are the plugin's config section (options.config in the gateway's backend).
type Options struct {
	DataDir string `json:"data_dir"`
}

// open decodes the config as every driver does (unknown keys are errors) and opens the
// driver.
func open(ctx context.Context, raw map[string]any) (drivers.Driver, error) {
	var o Options
	if err := drivers.DecodeOptions(raw, &o); err != nil {
		return nil, err
	}
	d, err := sqlite.Open(ctx, sqlite.Options{DataDir: o.DataDir})
	if err != nil {
		return nil, err
	}
	return &counting{Driver: d}, nil
}

// counting is the SQLite driver plus a counter of stored messages.
type counting struct {
	drivers.Driver
	stored atomic.Int64
}

func (c *counting) SendMessages(ctx context.Context, req drivers.SendMessagesRequest) (drivers.SendMessagesResult, error) {
	res, err := c.Driver.SendMessages(ctx, req)
	for _, e := range res.Entries {
		if e.Err == nil && !e.Duplicate {
			c.stored.Add(1)
		}
	}
	return res, err
}

func (c *counting) Metrics(ctx context.Context) ([]drivers.Metric, error) {
	ms, err := c.Driver.Metrics(ctx)
	return append(ms, drivers.Metric{Name: "counting_plugin_messages_stored_total",
		Help: "Messages this plugin process stored.", Type: drivers.Counter, Value: float64(c.stored.Load())}), err
}
