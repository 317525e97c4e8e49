package drivers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
)

func TestNoAbilityTypes(t *testing.T) {
	ctx := context.Background()
	a := drivers.NoActivity{Name: "d", Why: "no notification"}
	m := drivers.NoMoveTaskStore{Name: "d"}
	_, awaitErr := a.AwaitActivity(ctx, drivers.AwaitActivityRequest{})
	_, reportErr := m.ReportMoveTask(ctx, drivers.ReportMoveTaskRequest{})
	_, cancelErr := m.CancelMoveTask(ctx, "h")
	_, listErr := m.ListMoveTasks(ctx, "q", 1)
	_, adoptErr := m.AdoptMoveTasks(ctx, "o", time.Time{}, time.Time{})
	for method, err := range map[string]error{
		"AwaitActivity":  awaitErr,
		"WatchActivity":  a.WatchActivity(ctx, drivers.WatchActivityRequest{}),
		"StartMoveTask":  m.StartMoveTask(ctx, drivers.MoveTask{}),
		"ReportMoveTask": reportErr,
		"CancelMoveTask": cancelErr,
		"ListMoveTasks":  listErr,
		"AdoptMoveTasks": adoptErr,
	} {
		if drivers.KindOf(err) != drivers.KindUnsupported {
			t.Errorf("%s: kind %v, want KindUnsupported", method, drivers.KindOf(err))
		}
		if err == nil || !strings.HasPrefix(err.Error(), "d: "+method+": ") {
			t.Errorf("%s: error %v does not name the driver and the method", method, err)
		}
	}
}
