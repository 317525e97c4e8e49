package firestore

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"

	"github.com/anysqs/anysqs/drivers"
)

// A receipt handle is base64url(version | qid | mi | message doc id | claim generation |
// MAC). The generation is the message's claim counter at the receive that issued the
// handle: a later receive increments it, so an older handle is recognisably stale and
// cannot touch the newer delivery. The MAC, keyed by the key stored in <p>_meta, tells
// handles this storage issued from forged ones without a read, on every gateway.
const (
	handleVersion = 1
	macLen        = 16
)

type receipt struct {
	qid, mi, doc string
	gen          int64
}

func (d *Driver) encodeHandle(r receipt) string {
	b := []byte{handleVersion}
	for _, s := range []string{r.qid, r.mi, r.doc} {
		b = append(b, byte(len(s)))
		b = append(b, s...)
	}
	b = binary.BigEndian.AppendUint64(b, uint64(r.gen))
	b = append(b, d.mac(b)...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeHandle returns false for any handle this storage did not issue.
func (d *Driver) decodeHandle(h string) (receipt, bool) {
	b, err := base64.RawURLEncoding.DecodeString(h)
	if err != nil || len(b) < 1+3+8+macLen || b[0] != handleVersion {
		return receipt{}, false
	}
	payload, sum := b[:len(b)-macLen], b[len(b)-macLen:]
	if !hmac.Equal(sum, d.mac(payload)) {
		return receipt{}, false
	}
	var parts [3]string
	rest := payload[1:]
	for i := range parts {
		if len(rest) < 1 || len(rest) < 1+int(rest[0]) {
			return receipt{}, false
		}
		n := int(rest[0])
		parts[i], rest = string(rest[1:1+n]), rest[1+n:]
	}
	if len(rest) != 8 {
		return receipt{}, false
	}
	return receipt{qid: parts[0], mi: parts[1], doc: parts[2], gen: int64(binary.BigEndian.Uint64(rest))}, true
}

func (d *Driver) mac(payload []byte) []byte {
	m := hmac.New(sha256.New, d.secret)
	m.Write(payload)
	return m.Sum(nil)[:macLen]
}

func invalidHandle(reason string) *drivers.Error {
	return drivers.Errorf(drivers.KindInvalidReceiptHandle, "the receipt handle is invalid: %s", reason)
}

func staleHandle(reason string) *drivers.Error {
	return drivers.Errorf(drivers.KindStaleReceiptHandle, "the receipt handle is stale: %s", reason)
}
