package migrate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/anysqs/anysqs/drivers"
)

// Mode is how messages go to the destination.
type Mode string

const (
	// Copy sends a copy of every message and leaves the source as it was.
	Copy Mode = "copy"
	// Move receives each visible message, sends it and deletes it at the source.
	Move Mode = "move"
)

// InFlight says what a copy does with messages a consumer has in flight.
type InFlight string

const (
	InFlightWait InFlight = "wait" // copy them once their visibility ends, unless deleted meanwhile
	InFlightSkip InFlight = "skip" // leave them out
	InFlightCopy InFlight = "copy" // copy them now, as visible messages
)

// Endpoint is one side of a migration: an open driver and the account and region its
// gateway puts in ARNs.
type Endpoint struct {
	Driver    drivers.Driver
	AccountID string
	Region    string
	// Storage names the storage the driver was opened on (a digest of its options, say),
	// so that a journal is never resumed against other storage: a move would delete at
	// the source messages the journal shows sent to another destination. Empty: the
	// driver's name only.
	Storage string
}

func (e Endpoint) identity(d drivers.Description) string {
	if e.Storage == "" {
		return d.Name
	}
	return d.Name + " " + e.Storage
}

// Options configure Run.
type Options struct {
	From, To Endpoint
	// Queues is a glob (path.Match) on queue names; empty: every queue.
	Queues   string
	Mode     Mode
	InFlight InFlight // copy mode; default InFlightWait
	// Verify compares source and destination (or, moving, the journal and the
	// destination) when the messages are across.
	Verify bool
	// QueuesOnly creates the queues and leaves the messages: the first step of a
	// switchover, before producers move to the new gateway.
	QueuesOnly bool
	// Strict refuses to start when the destination cannot keep something a source queue
	// uses.
	Strict bool
	// StatePath is the journal file.
	StatePath string
	// VisibilityTimeout is how long a moving receive hides a message at the source; it
	// is also how soon after a crash the messages being moved come back. Default 60 s.
	VisibilityTimeout time.Duration
	// PollInterval is how often a run waiting for delayed or in-flight messages looks
	// again. Default 1 s.
	PollInterval time.Duration
	// Workers is how many receive-send-delete loops move one standard queue at once
	// (FIFO queues take one, to keep group order). Default 4.
	Workers int
	// Progress, when set, is called after every batch and when a queue ends.
	Progress func(Progress)
	// Log receives one line per queue step; nil discards them.
	Log *slog.Logger
	// Hook, when set, is called at each step of a send ("sending": the journal has the
	// intent; "sent": the destination answered; "journaled": the journal has the
	// answer; "deleted": moved messages were deleted at the source). Crash tests kill
	// the process there.
	Hook func(point string)
	// Now is the clock; nil: time.Now.
	Now func() time.Time
}

// Progress is where a run stands.
type Progress struct {
	Queues, QueuesDone int
	Messages           int64 // sent to the destination so far in this run
	Total              int64 // messages in the selected source queues at the start
}

// Report is what a run did.
type Report struct {
	Resumed bool
	// Gaps lists what the destination cannot keep of what the source queues use.
	Gaps []Gap
	// Queues, in the order they were created.
	Queues []QueueReport
	// MayDuplicate counts messages that may be at the destination twice, over every run
	// of this journal: a run was killed after the destination acknowledged their send
	// and before the journal recorded it, the destination did not show them on resume,
	// and they were sent again outside its FIFO deduplication window.
	MayDuplicate int
	// MayDuplicateIfConsumed is the part of MayDuplicate that the destination did not
	// have when a resumed run looked: they are there twice only if a consumer at the
	// destination received the first copy between the interruption and the resume.
	MayDuplicateIfConsumed int
	// Verify has one entry per queue when Options.Verify was set.
	Verify []VerifyResult
}

// QueueReport is one queue's outcome.
type QueueReport struct {
	Name     string
	Existed  bool   // the destination queue was there with equal attributes
	Refused  string // why the queue was not migrated; "" if it was
	Sent     int    // messages sent in this run
	Skipped  int    // in-flight messages left out (InFlightSkip)
	Resolved int    // sends of an interrupted run found at the destination on resume
}

// ErrDifferences is returned by Run when verification found a difference or a queue was
// refused.
var ErrDifferences = errors.New("migration incomplete")

// Run migrates the queues Options select and their messages, resuming from the journal
// at StatePath if there is one.
func Run(ctx context.Context, o Options) (Report, error) {
	o.defaults()
	var rep Report
	if o.Mode != Copy && o.Mode != Move {
		return rep, fmt.Errorf("mode %q is not copy or move", o.Mode)
	}
	switch o.InFlight {
	case InFlightWait, InFlightSkip, InFlightCopy:
	default:
		return rep, fmt.Errorf("in-flight %q is not wait, skip or copy", o.InFlight)
	}
	m, err := newMigration(ctx, o)
	if err != nil {
		return rep, err
	}
	plan, err := m.plan(ctx)
	if err != nil {
		return rep, err
	}
	rep.Gaps = plan.gaps
	if o.Strict && len(plan.gaps) > 0 {
		return rep, fmt.Errorf("--strict: the destination cannot keep %d thing(s) the source queues use (listed above); nothing was written", len(plan.gaps))
	}
	if err := m.checkBrowse(); err != nil {
		return rep, err
	}
	if o.QueuesOnly { // no message moves: nothing to journal
		rep.Queues = m.createQueues(ctx, plan)
		return rep, refusedErr(rep)
	}
	j, resumed, err := openJournal(o.StatePath, string(o.Mode), o.From.identity(m.fromDesc), o.To.identity(m.toDesc))
	if err != nil {
		return rep, err
	}
	defer j.close()
	m.j, rep.Resumed = j, resumed
	rep.Queues = m.createQueues(ctx, plan)
	if err := m.messages(ctx, &rep); err != nil {
		return rep, err
	}
	if o.Verify {
		if rep.Verify, err = m.verify(ctx, rep.Queues); err != nil {
			return rep, err
		}
	}
	for _, v := range rep.Verify {
		if !v.Equal() {
			return rep, ErrDifferences
		}
	}
	return rep, refusedErr(rep)
}

func refusedErr(rep Report) error {
	for _, q := range rep.Queues {
		if q.Refused != "" {
			return ErrDifferences
		}
	}
	return nil
}

func (o *Options) defaults() {
	if o.InFlight == "" {
		o.InFlight = InFlightWait
	}
	if o.VisibilityTimeout <= 0 {
		o.VisibilityTimeout = 60 * time.Second
	}
	if o.PollInterval <= 0 {
		o.PollInterval = time.Second
	}
	if o.Workers <= 0 {
		o.Workers = 4
	}
	if o.StatePath == "" {
		o.StatePath = "migrate-state.json"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
}

// migration is one run.
type migration struct {
	o                Options
	fromDesc, toDesc drivers.Description
	j                *journal

	mu       sync.Mutex
	progress Progress
}

func newMigration(ctx context.Context, o Options) (*migration, error) {
	m := &migration{o: o}
	var err error
	if m.fromDesc, err = o.From.Driver.Describe(ctx); err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	if m.toDesc, err = o.To.Driver.Describe(ctx); err != nil {
		return nil, fmt.Errorf("destination: %w", err)
	}
	return m, nil
}
