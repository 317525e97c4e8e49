package system_test

import (
	"testing"
	"time"
)

// TestLedgerDetectsFaults feeds the ledger histories that a broken backend would produce
// and checks that each fault is reported, so the system tests can fail.
func TestLedgerDetectsFaults(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	held := func(consumer int, call int64, recv, del int, body string) *delivery {
		return &delivery{consumer: consumer, call: call, body: body, recvStart: at(recv), recvEnd: at(recv + 1),
			delStart: at(del), delEnd: at(del + 1), deleted: true}
	}

	l := newLedger()
	l.ack("m1", "x", "")
	l.ack("m2", "y", "")
	l.record("m1", held(1, 1, 0, 10, "x"))
	l.record("m1", held(2, 2, 5, 20, "x")) // claimed while consumer 1 still held it
	if d := l.doubleDeliveries(time.Minute); len(d) != 1 {
		t.Errorf("doubleDeliveries = %v, want one", d)
	}
	if r := l.redelivered(); len(r) != 1 {
		t.Errorf("redelivered = %v, want one", r)
	}
	if m := l.missing(); len(m) != 1 || m[0] != "m2" {
		t.Errorf("missing = %v, want [m2]", m)
	}

	l = newLedger()
	l.record("a", held(1, 1, 0, 10, "g/0"))
	l.record("b", held(2, 2, 5, 20, "g/1")) // received before g/0 was deleted
	l.record("c", held(3, 3, 30, 40, "h/0"))
	l.record("d", &delivery{call: 3, index: 0, body: "h/1"}) // same batch, ahead of h/0
	l.deliveries["c"][0].index = 1
	l.record("e", held(4, 4, 50, 60, "k/0"))
	l.record("f", held(4, 5, 70, 80, "k/2")) // k/1 missing
	if v := l.fifoViolations(); len(v) != 3 {
		t.Errorf("fifoViolations = %v, want 3", v)
	}

	// x/0's first holder died before deleting it (its gateway was killed); x/1 must wait
	// for x/0's redelivery and deletion, not for the first holder's failed delete.
	lost := func(consumer int, call int64, recv int, body string) *delivery {
		d := held(consumer, call, recv, recv+1, body)
		d.deleted, d.delEnd = false, time.Time{}
		return d
	}
	l = newLedger()
	l.record("x0", lost(1, 1, 0, "x/0"))
	l.record("x1", held(2, 2, 100, 110, "x/1")) // while x/0 was still held by the dead consumer
	l.record("x0", held(3, 3, 2000, 2010, "x/0"))
	if v := l.fifoViolations(); len(v) != 1 {
		t.Errorf("fifoViolations = %v, want one (x/1 before x/0's redelivery)", v)
	}
	if c := l.counts(2 * time.Second); c.received != 2 || c.deliveries != 3 || c.redelivered != 1 || c.order != 1 || c.double != 0 {
		t.Errorf("counts = %v", c)
	}

	l = newLedger()
	l.record("a", held(1, 1, 0, 10, "g/0"))
	l.record("b", held(2, 2, 15, 20, "g/1"))
	l.record("x0", lost(1, 3, 30, "x/0"))
	l.record("x0", held(3, 4, 2100, 2110, "x/0"))
	l.record("x1", held(2, 5, 2120, 2130, "x/1"))
	if v := l.fifoViolations(); len(v) != 0 {
		t.Errorf("fifoViolations on a correct history = %v", v)
	}
	if d := l.doubleDeliveries(2 * time.Second); len(d) != 0 {
		t.Errorf("doubleDeliveries on a correct history = %v", d)
	}
}
