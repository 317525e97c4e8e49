package migrate_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// journalRecord is what the test reads of a journal line.
type journalRecord struct {
	T   string   `json:"t"`
	IDs []string `json:"ids"`
}

// countSent adds to n the messages the complete lines of b record as sent, and returns
// the bytes of an incomplete last line.
func countSent(b []byte, n *int) []byte {
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return b
		}
		var r journalRecord
		if json.Unmarshal(b[:i], &r) == nil && r.T == "sent" {
			*n += len(r.IDs)
		}
		b = b[i+1:]
	}
}

// journalSent is the number of messages the journal at path records as sent.
func journalSent(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	countSent(b, &n)
	return n
}

// journalWatch follows a migration journal through inotify on its directory: the file a
// run starts by renaming into place, then the records it appends.
type journalWatch struct {
	f    *os.File // the inotify instance, non-blocking so that close ends a read
	path string
}

func watchJournal(t *testing.T, path string) *journalWatch {
	t.Helper()
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		t.Fatalf("inotify: %v", err)
	}
	if _, err := syscall.InotifyAddWatch(fd, filepath.Dir(path), syscall.IN_MODIFY|syscall.IN_MOVED_TO); err != nil {
		syscall.Close(fd)
		t.Fatalf("inotify: %v", err)
	}
	return &journalWatch{f: os.NewFile(uintptr(fd), "inotify"), path: path}
}

func (w *journalWatch) close() { w.f.Close() }

// until calls reached with the number of messages the journal shows sent, each time the
// journal changes, until reached returns true (until then returns true) or the watch is
// closed (false).
func (w *journalWatch) until(reached func(sent int) bool) bool {
	var j *os.File // the journal file the running process writes
	defer func() {
		if j != nil {
			j.Close()
		}
	}()
	var tail []byte
	sent := 0
	buf := make([]byte, 64<<10)
	for {
		n, err := w.f.Read(buf)
		if err != nil {
			return false
		}
		changed := false
		for ev := buf[:n]; len(ev) >= syscall.SizeofInotifyEvent; {
			mask := binary.NativeEndian.Uint32(ev[4:8])
			size := syscall.SizeofInotifyEvent + int(binary.NativeEndian.Uint32(ev[12:16]))
			name := strings.TrimRight(string(ev[syscall.SizeofInotifyEvent:size]), "\x00")
			ev = ev[size:]
			if name != filepath.Base(w.path) {
				continue
			}
			if mask&syscall.IN_MOVED_TO != 0 { // a new journal, compacted: read it whole
				if j != nil {
					j.Close()
				}
				if j, err = os.Open(w.path); err != nil {
					return false
				}
				tail, sent = nil, 0
			}
			changed = j != nil
		}
		if !changed {
			continue
		}
		more, err := io.ReadAll(j)
		if err != nil {
			return false
		}
		tail = countSent(append(tail, more...), &sent)
		if reached(sent) {
			return true
		}
	}
}
