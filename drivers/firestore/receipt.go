package firestore

import (
	"encoding/binary"

	"github.com/anysqs/anysqs/drivers/sqsrule"
)

// A receipt handle seals (sqsrule.SealHandle) version | qid | mi | message doc id | claim
// generation, each string behind its length. The generation is the message's claim counter at the receive that issued the
// handle: a later receive increments it, so an older handle is recognisably stale and
// cannot touch the newer delivery. The MAC key is stored in <p>_meta, so every gateway
// opens the handles of the others.
const handleVersion = 1

type receipt struct {
	qid, mi, doc string
	gen          int64
}

func (d *Driver) encodeHandle(r receipt) string {
	b := []byte{handleVersion}
	for _, s := range []string{r.qid, r.mi, r.doc} {
		b = sqsrule.AppendField(b, s)
	}
	b = binary.BigEndian.AppendUint64(b, uint64(r.gen))
	return sqsrule.SealHandle(d.secret, b)
}

// decodeHandle returns false for any handle this storage did not issue.
func (d *Driver) decodeHandle(h string) (receipt, bool) {
	b, ok := sqsrule.OpenHandle(d.secret, h)
	if !ok || len(b) < 1+3+8 || b[0] != handleVersion {
		return receipt{}, false
	}
	parts, rest, ok := sqsrule.ReadFields(b[1:], 3)
	if !ok || len(rest) != 8 {
		return receipt{}, false
	}
	return receipt{qid: parts[0], mi: parts[1], doc: parts[2], gen: int64(binary.BigEndian.Uint64(rest))}, true
}
