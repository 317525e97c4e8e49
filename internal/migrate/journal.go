package migrate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// The journal is an append-only file of JSON lines, one record per step, each appended
// with an fsync before the step it guards goes on. Rewriting a whole snapshot per batch
// would cost O(messages²) bytes over a run; appends cost O(messages). The file is created
// (with its first record) by writing a temporary file, fsyncing it and renaming it into
// place, and compacted the same way when a run resumes, so a crash never leaves a
// half-written journal in place of a good one. A torn last line (the process killed
// mid-append) is ignored on reading: its step had not been acknowledged.
type journal struct {
	mu   sync.Mutex
	path string
	f    *os.File
	st   journalState
}

// record is one line of the journal.
type record struct {
	T   string    `json:"t"`             // start, sending, sent, unsent, maydup, done
	Q   string    `json:"q,omitempty"`   // queue
	IDs []string  `json:"ids,omitempty"` // message ids
	Sum []string  `json:"sum,omitempty"` // sent: each message's digest, as IDs
	At  time.Time `json:"at,omitzero"`   // sending: when the send was attempted
	// maydup: the destination was looked at and did not have them, so they are there
	// twice only if a consumer took the first copy.
	Consumed bool `json:"consumed,omitempty"`
	// start only.
	Mode string `json:"mode,omitempty"`
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
}

// journalState is what the records say so far.
type journalState struct {
	mode, from, to string
	queues         map[string]*queueJournal
}

// queueJournal is one queue's progress.
type queueJournal struct {
	sent    map[string]string    // message id → digest: the destination acknowledged it
	order   []string             // sent ids in journal order
	sending map[string]time.Time // message id → when its send began, without an ack yet
	// mayDup: sent again after an interrupted run, so the destination may have them
	// twice; true: only if a consumer there took the first copy before the resume
	// looked for it.
	mayDup map[string]bool
	done   bool
}

func (s *journalState) queue(name string) *queueJournal {
	if s.queues == nil {
		s.queues = map[string]*queueJournal{}
	}
	q := s.queues[name]
	if q == nil {
		q = &queueJournal{sent: map[string]string{}, sending: map[string]time.Time{}, mayDup: map[string]bool{}}
		s.queues[name] = q
	}
	return q
}

func (s *journalState) apply(r record) {
	switch r.T {
	case "start":
		s.mode, s.from, s.to = r.Mode, r.From, r.To
	case "sending":
		q := s.queue(r.Q)
		for _, id := range r.IDs {
			if _, ok := q.sent[id]; !ok {
				q.sending[id] = r.At
			}
		}
	case "sent":
		q := s.queue(r.Q)
		for i, id := range r.IDs {
			if _, ok := q.sent[id]; !ok {
				q.order = append(q.order, id)
			}
			sum := ""
			if i < len(r.Sum) {
				sum = r.Sum[i]
			}
			q.sent[id] = sum
			delete(q.sending, id)
		}
	case "maydup":
		q := s.queue(r.Q)
		for _, id := range r.IDs {
			q.mayDup[id] = r.Consumed
		}
	case "unsent":
		q := s.queue(r.Q)
		for _, id := range r.IDs {
			delete(q.sending, id)
		}
	case "done":
		s.queue(r.Q).done = true
	}
}

// records returns s as the shortest list of records that says the same.
func (s *journalState) records() []record {
	out := []record{{T: "start", Mode: s.mode, From: s.from, To: s.to}}
	for name, q := range s.queues {
		for i := 0; i < len(q.order); i += 1000 {
			ids := q.order[i:min(i+1000, len(q.order))]
			sums := make([]string, len(ids))
			for j, id := range ids {
				sums[j] = q.sent[id]
			}
			out = append(out, record{T: "sent", Q: name, IDs: ids, Sum: sums})
		}
		for id, at := range q.sending {
			out = append(out, record{T: "sending", Q: name, IDs: []string{id}, At: at})
		}
		for _, consumed := range []bool{false, true} {
			var ids []string
			for id, c := range q.mayDup {
				if c == consumed {
					ids = append(ids, id)
				}
			}
			if len(ids) > 0 {
				out = append(out, record{T: "maydup", Q: name, IDs: ids, Consumed: consumed})
			}
		}
		if q.done {
			out = append(out, record{T: "done", Q: name})
		}
	}
	return out
}

// openJournal reads the journal at path, if there is one, and checks that it belongs to
// a migration of the same mode between the same backends; it then rewrites it compacted
// (or creates it) and keeps it open for appends.
func openJournal(path, mode, from, to string) (*journal, bool, error) {
	j := &journal{path: path}
	resumed := false
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		resumed = true
		if err := j.read(data); err != nil {
			return nil, false, err
		}
		if j.st.mode != mode || j.st.from != from || j.st.to != to {
			return nil, false, fmt.Errorf("state file %s belongs to a %s migration from %s to %s, not %s from %s to %s: "+
				"name another --state for another migration. If the storage is the same and only its settings changed "+
				"(a rotated password), edit the first line of the file to the new names: resuming against other "+
				"storage would lose the messages it shows as sent", path, j.st.mode, j.st.from, j.st.to, mode, from, to)
		}
	case errors.Is(err, os.ErrNotExist):
		j.st.mode, j.st.from, j.st.to = mode, from, to
	default:
		return nil, false, err
	}
	if err := j.rewrite(); err != nil {
		return nil, false, err
	}
	return j, resumed, nil
}

func (j *journal) read(data []byte) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 64<<20)
	line := 0
	for sc.Scan() {
		line++
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			if !bytes.HasSuffix(data, []byte("\n")) && isLastLine(data, sc.Bytes()) {
				break // torn by a crash mid-append: that step was never acknowledged
			}
			return fmt.Errorf("state file %s line %d: %v", j.path, line, err)
		}
		if line == 1 && r.T != "start" {
			return fmt.Errorf("state file %s: not a migration journal", j.path)
		}
		j.st.apply(r)
	}
	return sc.Err()
}

func isLastLine(data, line []byte) bool { return bytes.HasSuffix(data, line) }

// rewrite writes the compacted journal to a temporary file, fsyncs it, renames it over
// path and fsyncs the directory, then opens it for appends.
func (j *journal) rewrite() error {
	tmp := j.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, r := range j.st.records() {
		if err := enc.Encode(r); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, j.path); err != nil {
		return err
	}
	if err := syncDir(filepath.Dir(j.path)); err != nil {
		return err
	}
	j.f, err = os.OpenFile(j.path, os.O_APPEND|os.O_WRONLY, 0)
	return err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// append writes r durably and applies it.
func (j *journal) append(r record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := j.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("state file %s: %w", j.path, err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("state file %s: %w", j.path, err)
	}
	j.st.apply(r)
	return nil
}

// view runs fn with the journal's state locked.
func (j *journal) view(fn func(*journalState)) {
	j.mu.Lock()
	defer j.mu.Unlock()
	fn(&j.st)
}

func (j *journal) close() error {
	if j.f == nil {
		return nil
	}
	return j.f.Close()
}
