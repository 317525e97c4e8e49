package sqsrule_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

func kindOf(err *drivers.Error) string {
	if err == nil {
		return "ok"
	}
	return err.Kind.String()
}

// TestDelete is the table of drivers.Driver.DeleteMessages: which handles delete, which
// succeed without effect, which fail.
func TestDelete(t *testing.T) {
	const (
		invalid = "InvalidReceiptHandle"
		stale   = "StaleReceiptHandle"
	)
	cases := []struct {
		state    sqsrule.HandleState
		fifo     bool
		remove   bool
		wantKind string
	}{
		{sqsrule.HandleForeign, false, false, invalid},
		{sqsrule.HandleForeign, true, false, invalid},
		{sqsrule.HandleGone, false, false, "ok"},
		{sqsrule.HandleGone, true, false, stale},
		{sqsrule.HandleStale, false, false, "ok"},
		{sqsrule.HandleStale, true, false, stale},
		{sqsrule.HandleExpired, false, true, "ok"},
		{sqsrule.HandleExpired, true, false, stale},
		{sqsrule.HandleInFlight, false, true, "ok"},
		{sqsrule.HandleInFlight, true, true, "ok"},
	}
	for _, c := range cases {
		remove, err := sqsrule.Delete(c.state, c.fifo)
		if remove != c.remove || kindOf(err) != c.wantKind {
			t.Errorf("Delete(%d, fifo %v) = %v, %s; want %v, %s", c.state, c.fifo, remove, kindOf(err), c.remove, c.wantKind)
		}
	}
}

// TestChangeVisibility is the table of drivers.Driver.ChangeVisibility, with the cap of
// 12 hours from the latest receive.
func TestChangeVisibility(t *testing.T) {
	const (
		invalid = "InvalidReceiptHandle"
		stale   = "StaleReceiptHandle"
		arg     = "InvalidArgument"
	)
	recv := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	within, past := recv.Add(12*time.Hour), recv.Add(12*time.Hour+time.Nanosecond)
	cases := []struct {
		state    sqsrule.HandleState
		fifo     bool
		deadline time.Time
		received time.Time
		apply    bool
		wantKind string
	}{
		{sqsrule.HandleForeign, false, within, recv, false, invalid},
		{sqsrule.HandleForeign, true, within, recv, false, invalid},
		{sqsrule.HandleGone, false, within, recv, false, stale},
		{sqsrule.HandleGone, true, within, recv, false, stale},
		{sqsrule.HandleStale, false, within, recv, true, "ok"},
		{sqsrule.HandleStale, true, within, recv, false, stale},
		{sqsrule.HandleExpired, false, within, recv, true, "ok"},
		{sqsrule.HandleExpired, true, within, recv, false, stale},
		{sqsrule.HandleInFlight, false, within, recv, true, "ok"},
		{sqsrule.HandleInFlight, true, within, recv, true, "ok"},
		{sqsrule.HandleInFlight, false, past, recv, false, arg},
		{sqsrule.HandleInFlight, true, past, recv, false, arg},
		{sqsrule.HandleStale, false, past, recv, false, arg},
		{sqsrule.HandleInFlight, false, past, time.Time{}, true, "ok"}, // receive time unknown: no cap
		{sqsrule.HandleStale, true, past, recv, false, stale},          // a FIFO stale handle fails first
	}
	for i, c := range cases {
		apply, err := sqsrule.ChangeVisibility(c.state, c.fifo, 60, c.deadline, c.received)
		if apply != c.apply || kindOf(err) != c.wantKind {
			t.Errorf("case %d: ChangeVisibility(%d, fifo %v, deadline %v) = %v, %s; want %v, %s",
				i, c.state, c.fifo, c.deadline.Sub(recv), apply, kindOf(err), c.apply, c.wantKind)
		}
	}
	_, err := sqsrule.ChangeVisibility(sqsrule.HandleInFlight, false, 43200, past, recv)
	if want := "visibility timeout 43200 s would keep the message invisible past 12 hours from its receive at 2026-01-02T03:04:05Z"; err == nil || err.Message != want {
		t.Errorf("cap error %v, want message %q", err, want)
	}
}

func TestSequenceNumber(t *testing.T) {
	for n, want := range map[int64]string{0: "", 1: "00000000000000000001", 1<<63 - 1: "09223372036854775807"} {
		if got := sqsrule.SequenceNumber(n); got != want {
			t.Errorf("SequenceNumber(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestSealOpen(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	payload := sqsrule.AppendField([]byte{1}, "queue")
	payload = sqsrule.AppendField(payload, "message")
	h := sqsrule.SealHandle(key, payload)
	got, ok := sqsrule.OpenHandle(key, h)
	if !ok || string(got) != string(payload) {
		t.Fatalf("OpenHandle = %q, %v; want %q", got, ok, payload)
	}
	fields, rest, ok := sqsrule.ReadFields(got[1:], 2)
	if !ok || fmt.Sprint(fields) != "[queue message]" || len(rest) != 0 {
		t.Fatalf("ReadFields = %q, %q, %v", fields, rest, ok)
	}
	if _, _, ok := sqsrule.ReadFields(got[1:], 3); ok {
		t.Fatal("ReadFields read a field that is not there")
	}
	for _, bad := range []string{"", "!", h[:len(h)-1], h + "A", sqsrule.SealHandle([]byte("other key"), payload)} {
		if _, ok := sqsrule.OpenHandle(key, bad); ok {
			t.Errorf("OpenHandle(%q) opened", bad)
		}
	}
}
