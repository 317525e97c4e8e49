package spanner

import (
	"encoding/base64"
	"encoding/binary"
	"hash/fnv"

	"cloud.google.com/go/spanner"

	"github.com/anysqs/anysqs/drivers"
)

// A receipt handle names the message row (queue, part, sequence) and the token the claim
// wrote into it. Everything needed to check it is in the database, so a handle works
// through any gateway and after restarts; a later claim writes a new token, which makes
// older handles stale.
type handle struct {
	queueHash uint32 // of the queue name: a handle of another queue is not one of this queue's
	part      string
	seq       int64
	token     string
}

const handleVersion = 1

func queueHash(name string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(name))
	return h.Sum32()
}

func (h handle) String() string {
	b := make([]byte, 0, 1+4+binary.MaxVarintLen64*2+len(h.part)+len(h.token))
	b = append(b, handleVersion)
	b = binary.BigEndian.AppendUint32(b, h.queueHash)
	b = binary.AppendUvarint(b, uint64(len(h.part)))
	b = append(b, h.part...)
	b = binary.AppendVarint(b, h.seq)
	b = append(b, h.token...)
	return base64.RawURLEncoding.EncodeToString(b)
}

func parseHandle(queue, s string) (handle, *drivers.Error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < 6 || b[0] != handleVersion {
		return handle{}, invalidHandle(s)
	}
	h := handle{queueHash: binary.BigEndian.Uint32(b[1:5])}
	b = b[5:]
	n, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n {
		return handle{}, invalidHandle(s)
	}
	h.part = string(b[k : k+int(n)])
	b = b[k+int(n):]
	seq, k := binary.Varint(b)
	if k <= 0 || len(b)-k != 36 {
		return handle{}, invalidHandle(s)
	}
	h.seq, h.token = seq, string(b[k:])
	if h.queueHash != queueHash(queue) {
		return handle{}, invalidHandle(s)
	}
	return h, nil
}

func (h handle) key(queue string) spanner.Key { return spanner.Key{queue, h.part, h.seq} }

func invalidHandle(s string) *drivers.Error {
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	return drivers.Errorf(drivers.KindInvalidReceiptHandle, "receipt handle %q is not valid", s)
}
