package sqsrule_test

import (
	"strings"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

func TestCheckPurge(t *testing.T) {
	base := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name    string
		last    time.Time
		now     time.Time
		refused bool
	}{
		{"never purged", time.Time{}, base, false},
		{"at once again", base, base, true},
		{"a nanosecond short of 60 s", base, base.Add(sqsrule.PurgeInterval - 1), true},
		{"60 s later", base, base.Add(sqsrule.PurgeInterval), false},
		{"an hour later", base, base.Add(time.Hour), false},
		{"a clock that went back", base, base.Add(-time.Second), true},
	} {
		err := sqsrule.CheckPurge("q", c.last, c.now)
		if (err != nil) != c.refused {
			t.Errorf("%s: CheckPurge = %v, refused %v", c.name, err, c.refused)
			continue
		}
		if err != nil && (drivers.KindOf(err) != drivers.KindPurgeInProgress || !strings.Contains(err.Error(), "queue q was purged at 2026-12-04T12:00:00Z")) {
			t.Errorf("%s: %v (kind %v), want PurgeInProgress naming the queue and the last purge", c.name, err, drivers.KindOf(err))
		}
	}
}

func TestCheckNameReuse(t *testing.T) {
	deleted := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name         string
		deleted, now time.Time
		refused      bool
	}{
		{"never deleted", time.Time{}, deleted, false},
		{"no creation time", deleted, time.Time{}, false},
		{"at once", deleted, deleted, true},
		{"30 s later", deleted, deleted.Add(30 * time.Second), true},
		{"a nanosecond short of 60 s", deleted, deleted.Add(drivers.QueueNameReuseDelay - 1), true},
		{"60 s later", deleted, deleted.Add(drivers.QueueNameReuseDelay), false},
		{"a day later", deleted, deleted.Add(24 * time.Hour), false},
	} {
		err := sqsrule.CheckNameReuse("q", c.deleted, c.now)
		if (err != nil) != c.refused {
			t.Errorf("%s: CheckNameReuse = %v, refused %v", c.name, err, c.refused)
			continue
		}
		if err != nil && (drivers.KindOf(err) != drivers.KindDeletedRecently || !strings.Contains(err.Error(), "queue q was deleted at 2026-12-04T12:00:00Z")) {
			t.Errorf("%s: %v (kind %v), want DeletedRecently naming the queue and the deletion", c.name, err, drivers.KindOf(err))
		}
	}
}
