package postgres_test

import (
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/postgres"
)

// TestOwnDLQColumnsCleared: drivers before schema version 9 stored a queue that names
// itself as its dead-letter queue as redriving to itself, and their claims moved its
// messages again and again instead of delivering them. Migration 9 clears those
// columns, after which the messages are delivered, their receive count growing.
func TestOwnDLQColumnsCleared(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	d := openDriver(t, dsn)
	a := stdAttrs()
	a.RedrivePolicy = &drivers.RedrivePolicy{DeadLetterQueue: "own", MaxReceiveCount: 1}
	createQueue(t, d, "own", a)
	createQueue(t, d, "other", stdAttrs())
	a.RedrivePolicy = &drivers.RedrivePolicy{DeadLetterQueue: "other", MaxReceiveCount: 1}
	createQueue(t, d, "src", a)
	// What an older driver stored for the queue itself.
	execSQL(t, dsn, `UPDATE anysqs.queues SET max_receive = 1, dlq_name = 'own' WHERE name = 'own'`)
	execSQL(t, dsn, `SET search_path TO anysqs; `+postgres.Migration(9))

	send(t, d, "own", epoch, drivers.SendEntry{Body: "x"})
	for i := int32(1); i <= 3; i++ {
		got := receive(t, d, "own", epoch.Add(time.Duration(i)*time.Minute), 1, 30).Messages
		if len(got) != 1 || got[0].ReceiveCount != i {
			t.Fatalf("receive %d: %d messages %+v, want x received %d times", i, len(got), got, i)
		}
	}
	// A queue with another dead-letter queue keeps its target.
	send(t, d, "src", epoch, drivers.SendEntry{Body: "y"})
	receive(t, d, "src", epoch.Add(time.Minute), 1, 30)
	if got := receive(t, d, "src", epoch.Add(2*time.Minute), 1, 30).Messages; len(got) != 0 {
		t.Fatalf("src delivered %d messages after maxReceiveCount, want its message in other", len(got))
	}
	if got := receive(t, d, "other", epoch.Add(2*time.Minute), 1, 30).Messages; len(got) != 1 || got[0].DeadLetterSource != "src" {
		t.Fatalf("other holds %+v, want y from src", got)
	}
}
