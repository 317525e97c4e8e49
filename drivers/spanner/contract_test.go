package spanner_test

import (
	"context"
	"sync"
	"testing"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/drivertest"
	"github.com/anysqs/anysqs/drivers/spanner"
	"github.com/anysqs/anysqs/internal/testenv"
)

const (
	testProject  = "anysqs-test"
	testInstance = "anysqs"
)

// newDatabase names a fresh database on the emulator (the driver creates it on first
// Open) and drops it when t ends. Creating one takes a few milliseconds there.
func newDatabase(t testing.TB) spanner.Options {
	t.Helper()
	return spanner.Options{Project: testProject, Instance: testInstance,
		Database: testenv.SpannerDatabase(t, testProject, testInstance, "t")}
}

func open(t testing.TB, o spanner.Options) *spanner.Driver {
	t.Helper()
	d, err := spanner.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDriverContract runs the driver contract suite, each case on a database of its own.
func TestDriverContract(t *testing.T) {
	dbs := map[drivers.Driver]spanner.Options{}
	var mu = make(chan struct{}, 1)
	remember := func(d drivers.Driver, o spanner.Options) drivers.Driver {
		mu <- struct{}{}
		dbs[d] = o
		<-mu
		return d
	}
	optsOf := func(d drivers.Driver) spanner.Options {
		mu <- struct{}{}
		defer func() { <-mu }()
		return dbs[d]
	}
	drivertest.RunConformance(t, drivertest.Harness{
		NewDriver: func(t *testing.T) drivers.Driver {
			o := newDatabase(t)
			return remember(open(t, o), o)
		},
		Reopen: func(t *testing.T, d drivers.Driver) drivers.Driver {
			o := optsOf(d)
			d.Close()
			return remember(open(t, o), o)
		},
		NewDriverOnSameStorage: func(t *testing.T, d drivers.Driver) drivers.Driver {
			o := optsOf(d)
			return remember(open(t, o), o)
		},
	})
}

// TestConcurrentOpensCreateSchema: gateways started together on a new database (the
// replicas of one deployment) all open it, although only one schema change runs at a
// time and the others are refused while it does.
func TestConcurrentOpensCreateSchema(t *testing.T) {
	o := newDatabase(t)
	ds := make([]*spanner.Driver, 8)
	errs := make([]error, len(ds))
	var wg sync.WaitGroup
	for i := range ds {
		wg.Go(func() { ds[i], errs[i] = spanner.Open(context.Background(), o) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("open %d of %d at once: %v", i, len(ds), err)
			continue
		}
		ds[i].Close()
	}
}
