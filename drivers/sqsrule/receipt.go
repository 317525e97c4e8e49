package sqsrule

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"

	"github.com/anysqs/anysqs/drivers"
)

// A receipt handle is base64url(payload | MAC). The payload is the driver's own: what
// the handle names (queue, message, claim) behind a version byte. The MAC is the first
// MACLen bytes of HMAC-SHA256 over the payload, keyed by a secret the driver keeps with
// its storage, so that every gateway on that storage tells the handles it issued from
// forged or foreign ones without a read, and after restarts. SQS documents handles as
// opaque; a handle that names another message is not a handle SQS issued.
const (
	// MACLen is the length in bytes of a handle's MAC.
	MACLen = 16
	// KeyLen is the length in bytes of a key made by NewKey.
	KeyLen = 32
)

// NewKey returns a fresh random MAC key. A driver makes it once per storage and keeps it
// there, where every gateway on that storage reads it.
func NewKey() ([]byte, error) {
	k := make([]byte, KeyLen)
	if _, err := rand.Read(k); err != nil {
		return nil, err
	}
	return k, nil
}

// SealHandle returns the receipt handle of payload under key.
func SealHandle(key, payload []byte) string {
	b := make([]byte, 0, len(payload)+MACLen)
	b = append(b, payload...)
	b = append(b, mac(key, payload)...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// OpenHandle returns the payload of a handle sealed under key; ok is false for anything
// else (not base64url, too short, a MAC that does not match).
func OpenHandle(key []byte, handle string) (payload []byte, ok bool) {
	b, err := base64.RawURLEncoding.DecodeString(handle)
	if err != nil || len(b) <= MACLen {
		return nil, false
	}
	payload, sum := b[:len(b)-MACLen], b[len(b)-MACLen:]
	if !hmac.Equal(sum, mac(key, payload)) {
		return nil, false
	}
	return payload, true
}

func mac(key, payload []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(payload)
	return m.Sum(nil)[:MACLen]
}

// AppendField appends s to a handle payload with a one-byte length; s must be shorter
// than 256 bytes (ids and tokens are).
func AppendField(b []byte, s string) []byte {
	b = append(b, byte(len(s)))
	return append(b, s...)
}

// ReadFields reads n fields written by AppendField from the front of b and returns the
// rest; ok is false when b holds fewer.
func ReadFields(b []byte, n int) (fields []string, rest []byte, ok bool) {
	fields = make([]string, n)
	for i := range fields {
		if len(b) < 1 || len(b) < 1+int(b[0]) {
			return nil, nil, false
		}
		k := int(b[0])
		fields[i], b = string(b[1:1+k]), b[1+k:]
	}
	return fields, b, true
}

// InvalidHandle is the entry error for a handle the driver did not issue for this queue.
func InvalidHandle(reason string) *drivers.Error {
	return drivers.Errorf(drivers.KindInvalidReceiptHandle, "the receipt handle is invalid: %s", reason)
}

// StaleHandle is the entry error for a handle the driver issued that can no longer be
// used (see Delete and ChangeVisibility).
func StaleHandle(reason string) *drivers.Error {
	return drivers.Errorf(drivers.KindStaleReceiptHandle, "the receipt handle is stale: %s", reason)
}
