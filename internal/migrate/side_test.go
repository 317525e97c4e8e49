package migrate_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/internal/servetest"
)

// killSide is one backend of a subprocess migration: the environment that points its
// shipped configuration at fresh test storage, and a way to open it in this process.
type killSide struct {
	config string
	env    []string // ANYSQS_* as servetest gives them
}

func newKillSide(t *testing.T, backend string) killSide {
	return killSide{config: servetest.Config(servetest.Backends[backend]), env: servetest.BackendEnv(t, backend)}
}

// prefixed returns the side's environment for `anysqs migrate`: ANYSQS_X as PREFIX_X.
func (s killSide) prefixed(prefix string) []string {
	var out []string
	for _, kv := range s.env {
		out = append(out, prefix+strings.TrimPrefix(kv, "ANYSQS_"))
	}
	return out
}

func (s killSide) open(t *testing.T, backend string) drivers.Driver {
	t.Helper()
	return openWithEnv(t, backend, s.env).Driver
}

// browseAll calls fn with every message of queue, page by page.
func browseAll(ctx context.Context, d drivers.Driver, queue string, fn func(drivers.BrowsedMessage)) error {
	after := ""
	for {
		res, err := d.BrowseMessages(ctx, drivers.BrowseMessagesRequest{Name: queue, Now: time.Now(), After: after, Limit: 100})
		if err != nil {
			return err
		}
		for _, b := range res.Messages {
			fn(b)
		}
		if after = res.NextAfter; after == "" {
			return nil
		}
	}
}
