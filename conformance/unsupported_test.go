package conformance

import (
	"context"
	"testing"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
)

// reducedDriver is a real driver that declares some capabilities Unsupported: the gateway
// must then reject the requests needing them, without reaching the driver.
type reducedDriver struct {
	drivers.Driver
	unsupported map[capabilities.ID]bool
}

func (d reducedDriver) Describe(ctx context.Context) (drivers.Description, error) {
	desc, err := d.Driver.Describe(ctx)
	if err != nil {
		return desc, err
	}
	desc.Name += "-reduced"
	for i, c := range desc.Capabilities {
		if d.unsupported[c.ID] {
			desc.Capabilities[i] = capabilities.Declaration{ID: c.ID, Level: capabilities.Unsupported,
				Note: "declared unsupported by the conformance suite's reduced test driver"}
		}
	}
	return desc, nil
}

// reducedBackend is the embedded backend with id declared Unsupported.
func reducedBackend(id capabilities.ID) backend {
	return backend{name: "sqlite-reduced", parallel: true, prepare: func(t *testing.T) storage {
		st := rowNamed("sqlite").prepare(t)
		return storage{open: func(ctx context.Context) (drivers.Driver, error) {
			d, err := st.open(ctx)
			if err != nil {
				return nil, err
			}
			return reducedDriver{Driver: d, unsupported: map[capabilities.ID]bool{id: true}}, nil
		}}
	}}
}

// TestUnsupportedRejected runs each unsupported probe against the embedded backend with
// that one capability deliberately declared Unsupported: the request fails with the
// catalog's SQS error and the backend is unchanged.
func TestUnsupportedRejected(t *testing.T) {
	for id, probe := range unsupportedProbes() {
		t.Run(string(id), func(t *testing.T) {
			t.Parallel()
			takeCPUSlot(t)
			h := newHarness(t, reducedBackend(id))
			if l := h.Level(id); l != capabilities.Unsupported {
				t.Fatalf("reduced driver declares %s %s", id, l)
			}
			probe(h)
		})
	}
}
