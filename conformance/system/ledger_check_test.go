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
	l.ack("m1", "x")
	l.ack("m2", "y")
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

	l = newLedger()
	l.record("a", held(1, 1, 0, 10, "g/0"))
	l.record("b", held(2, 2, 15, 20, "g/1"))
	if v := l.fifoViolations(); len(v) != 0 {
		t.Errorf("fifoViolations on a correct history = %v", v)
	}
	if d := l.doubleDeliveries(time.Minute); len(d) != 0 {
		t.Errorf("doubleDeliveries on a correct history = %v", d)
	}
}
