package postgres

import (
	"encoding/base64"
	"encoding/binary"
	"testing"

	"github.com/anysqs/anysqs/drivers"
)

// TestHandleFormatStable: a handle sealed under a key opens to what it names, and the
// same receipt under the same key gives the same handle, so handles survive an upgrade
// that keeps the format (the key is kept in the database). It opens under no other key,
// not after a changed byte, and the unsealed handles of drivers before the seal (version
// 1) do not open at all.
func TestHandleFormatStable(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	h := handle{queueID: 7, id: 1234567, token: [16]byte{0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff}}
	const golden = "AgAAAAcAAAAAABLWhwARIjNEVWZ3iJmqu8zd7v_djdfxJb0Ol2PqR31Yb5P6"
	if got := h.seal(key); got != golden {
		t.Fatalf("seal = %q, want %q", got, golden)
	}
	if got, err := openHandle(key, golden); err != nil || got != h {
		t.Fatalf("openHandle(golden) = %+v, %v; want %+v", got, err, h)
	}
	if _, err := openHandle([]byte("another key of thirty-two bytes!"), golden); drivers.KindOf(err) != drivers.KindInvalidReceiptHandle {
		t.Fatalf("a handle opened under another key: %v", err)
	}
	// Another row of the same queue: the payload changed, the MAC kept.
	raw, _ := base64.RawURLEncoding.DecodeString(golden)
	raw[12] ^= 1
	if _, err := openHandle(key, base64.RawURLEncoding.EncodeToString(raw)); drivers.KindOf(err) != drivers.KindInvalidReceiptHandle {
		t.Fatalf("an altered handle opened: %v", err)
	}
	// Version 1: the same fields, unsealed, which anyone could write for a guessed row.
	v1 := []byte{1}
	v1 = binary.BigEndian.AppendUint32(v1, uint32(h.queueID))
	v1 = binary.BigEndian.AppendUint64(v1, uint64(h.id))
	v1 = append(v1, h.token[:]...)
	if _, err := openHandle(key, base64.RawURLEncoding.EncodeToString(v1)); drivers.KindOf(err) != drivers.KindInvalidReceiptHandle {
		t.Fatalf("an unsealed version 1 handle opened: %v", err)
	}
}
