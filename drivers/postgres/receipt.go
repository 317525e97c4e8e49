package postgres

import (
	"encoding/base64"
	"encoding/binary"

	"github.com/anysqs/anysqs/drivers"
)

// A receipt handle names the row (queue id, message row id) and the receipt token the
// claim wrote into it. Everything needed to check it is in the database, so a handle
// works through any gateway instance and after restarts; a later claim writes a new
// token, which makes older handles stale.
type handle struct {
	queueID int32
	id      int64
	token   [16]byte
}

const handleVersion = 1

// handleLen is version byte + queue id + row id + token.
const handleLen = 1 + 4 + 8 + 16

func (h handle) String() string {
	var b [handleLen]byte
	b[0] = handleVersion
	binary.BigEndian.PutUint32(b[1:], uint32(h.queueID))
	binary.BigEndian.PutUint64(b[5:], uint64(h.id))
	copy(b[13:], h.token[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func parseHandle(s string) (handle, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != handleLen || b[0] != handleVersion {
		return handle{}, invalidHandle(s)
	}
	h := handle{queueID: int32(binary.BigEndian.Uint32(b[1:])), id: int64(binary.BigEndian.Uint64(b[5:]))}
	copy(h.token[:], b[13:])
	return h, nil
}

func invalidHandle(s string) *drivers.Error {
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	return drivers.Errorf(drivers.KindInvalidReceiptHandle, "receipt handle %q is not valid", s)
}

// parsedHandles splits a batch into well-formed handles (with their entry index) and
// per-entry errors for the others.
type parsedHandles struct {
	ids    []int64
	tokens [][16]byte // uuid, sent in binary
	ords   []int32
	queue  []int32
}

func parseHandles(n int, get func(i int) string, errs []*drivers.Error) parsedHandles {
	var p parsedHandles
	for i := 0; i < n; i++ {
		h, err := parseHandle(get(i))
		if err != nil {
			errs[i] = err.(*drivers.Error)
			continue
		}
		p.ids = append(p.ids, h.id)
		p.tokens = append(p.tokens, h.token)
		p.ords = append(p.ords, int32(i))
		p.queue = append(p.queue, h.queueID)
	}
	return p
}
