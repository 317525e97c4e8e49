package conformance

import (
	"bufio"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// nextServedWait returns a channel closed once the served gateway has one more long
// poll waiting than now (its anysqs_long_polls_waiting gauge, read from /metrics). A
// long poll registers its waiter before its first receive, so a send through the same
// gateway from then on wakes it: the event NextEmptyReceive stands for.
func (h *H) nextServedWait() <-chan struct{} {
	c := make(chan struct{})
	base, err := longPollsWaiting(h.served.AdminURL())
	if err != nil {
		h.T.Fatalf("read the served gateway's metrics: %v", err)
	}
	go func() {
		defer close(c)
		guard := time.Now().Add(2 * time.Minute) // hang guard, not a bound on the gateway
		for time.Now().Before(guard) && h.Ctx.Err() == nil {
			if n, err := longPollsWaiting(h.served.AdminURL()); err == nil && n > base {
				return
			}
			time.Sleep(2 * time.Millisecond) // polling the gauge: the process tells no one
		}
	}()
	return c
}

// longPollsWaiting reads anysqs_long_polls_waiting from a gateway's /metrics.
func longPollsWaiting(admin string) (int, error) {
	resp, err := http.Get(admin + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "anysqs_long_polls_waiting "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return int(f), err
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, os.ErrNotExist
}
