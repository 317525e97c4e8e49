package cosmos

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"

	"github.com/anysqs/anysqs/drivers"
)

// A receipt handle is base64url(version | len | incarnation | len | message id | claim
// token | MAC). The token is fresh per receive and stored in the message, so a handle
// names one claim generation: a stale handle cannot delete or extend a newer claim.
// The incarnation ties it to one life of the queue. The MAC, keyed by a secret kept in
// the container, tells handles this driver issued from others on every instance.
const (
	handleVersion = 1
	macLen        = 16
)

type receipt struct {
	inc, mid, tok string
}

func (d *Driver) encodeHandle(r receipt) string {
	b := []byte{handleVersion}
	for _, s := range []string{r.inc, r.mid, r.tok} {
		b = append(b, byte(len(s)))
		b = append(b, s...)
	}
	b = append(b, d.mac(b)...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeHandle returns false for any handle this driver did not issue.
func (d *Driver) decodeHandle(h string) (receipt, bool) {
	b, err := base64.RawURLEncoding.DecodeString(h)
	if err != nil || len(b) < 1+3+macLen || b[0] != handleVersion {
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
	if len(rest) != 0 {
		return receipt{}, false
	}
	return receipt{inc: parts[0], mid: parts[1], tok: parts[2]}, true
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
