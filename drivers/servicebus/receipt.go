package servicebus

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/anysqs/anysqs/drivers"
)

// Receipt handles: "<instance>.<counter>.<mac>", the mac binding instance, queue and
// counter under this instance's key. A handle is this instance's when the mac checks;
// which message it names is in d.held (in flight) or d.expired (visibility ran out).

func (d *Driver) mac(queue string, n uint64) string {
	m := hmac.New(sha256.New, d.key)
	m.Write([]byte(d.instance + "\x00" + queue + "\x00" + strconv.FormatUint(n, 10)))
	return hex.EncodeToString(m.Sum(nil)[:12])
}

// newHandle issues a handle; call with d.mu held.
func (d *Driver) newHandle(queue string) string {
	d.counter++
	return d.instance + "." + strconv.FormatUint(d.counter, 10) + "." + d.mac(queue, d.counter)
}

// ours reports whether h is a handle this instance issued for queue.
func (d *Driver) ours(queue, h string) bool {
	parts := strings.Split(h, ".")
	if len(parts) != 3 || parts[0] != d.instance {
		return false
	}
	n, err := strconv.ParseUint(parts[1], 10, 64)
	if err != nil || strconv.FormatUint(n, 10) != parts[1] {
		return false
	}
	return hmac.Equal([]byte(parts[2]), []byte(d.mac(queue, n)))
}

func invalidHandle(queue string) *drivers.Error {
	return drivers.Errorf(drivers.KindInvalidReceiptHandle,
		"servicebus: queue %s: the receipt handle was not issued by this gateway instance for this queue (a lock belongs to the instance that received the message; it does not survive a restart)", queue)
}

// handleState is what this instance knows of a receipt handle.
type handleState int

const (
	handleForeign handleState = iota // not issued by this instance for this queue
	handleHeld                       // in flight, lock held
	handleExpired                    // visibility ended, message not received again
	handleStale                      // issued here, superseded or settled
)

func (d *Driver) lookup(queue, handle string) (*held, handleState) {
	if !d.ours(queue, handle) {
		return nil, handleForeign
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if h, ok := d.held[handle]; ok && h.queue == queue {
		return h, handleHeld
	}
	if _, ok := d.expired[handle]; ok {
		return nil, handleExpired
	}
	return nil, handleStale
}
