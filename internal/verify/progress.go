package verify

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/anysqs/anysqs/capabilities/report"
	"github.com/anysqs/anysqs/conformance"
)

// progress shows cases done out of the total and the failures so far: one line kept
// up to date on a terminal, a line per failure and every 25 cases otherwise.
type progress struct {
	mu           sync.Mutex
	w            io.Writer
	tty          bool
	total, count int
	failed       int
}

func newProgress(w io.Writer, total int) *progress {
	p := &progress{w: w, total: total}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *progress) add(o conformance.Outcome) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.count++
	if o.Status == report.Fail {
		p.failed++
		if p.tty {
			fmt.Fprint(p.w, "\r\033[K")
		}
		fmt.Fprintf(p.w, "FAIL %s\n", o.Path)
	}
	switch {
	case p.tty:
		fmt.Fprintf(p.w, "\r\033[K%d/%d cases, %d failed", p.count, p.total, p.failed)
	case p.count%25 == 0 || p.count == p.total:
		fmt.Fprintf(p.w, "%d/%d cases, %d failed\n", p.count, p.total, p.failed)
	}
}

// done ends the progress line.
func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		fmt.Fprintln(p.w)
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b)
}
