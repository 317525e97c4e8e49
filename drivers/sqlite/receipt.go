package sqlite

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"

	"github.com/anysqs/anysqs/drivers"
)

// A receipt handle is base64url(version | queue id | message row id | receive token | MAC).
// The token is fresh random bytes per receive, stored with the message, so a handle
// names one particular receive. The MAC (keyed by a secret kept in the database) lets
// the driver tell handles it issued from forged or foreign ones without a lookup, and
// survives restarts because the secret does.
const (
	handleVersion = 1
	tokenLen      = 12
	macLen        = 16
	payloadLen    = 1 + 8 + 8 + tokenLen
)

type receipt struct {
	queueID int64
	rowID   int64
	token   string // hex of the token bytes, as stored in messages.token
}

func newToken() (string, error) {
	b := make([]byte, tokenLen)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

func (d *Driver) encodeHandle(r receipt) string {
	tok, err := hex.DecodeString(r.token)
	if err != nil || len(tok) != tokenLen {
		return "" // cannot happen for tokens made by newToken
	}
	b := make([]byte, 0, payloadLen+macLen)
	b = append(b, handleVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(r.queueID))
	b = binary.BigEndian.AppendUint64(b, uint64(r.rowID))
	b = append(b, tok...)
	b = append(b, d.mac(b)...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeHandle returns false for any handle this driver did not issue.
func (d *Driver) decodeHandle(h string) (receipt, bool) {
	b, err := base64.RawURLEncoding.DecodeString(h)
	if err != nil || len(b) != payloadLen+macLen || b[0] != handleVersion {
		return receipt{}, false
	}
	if !hmac.Equal(b[payloadLen:], d.mac(b[:payloadLen])) {
		return receipt{}, false
	}
	return receipt{
		queueID: int64(binary.BigEndian.Uint64(b[1:9])),
		rowID:   int64(binary.BigEndian.Uint64(b[9:17])),
		token:   hex.EncodeToString(b[17:payloadLen]),
	}, true
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

// loadSecret reads the receipt handle key, creating it in a new database.
func (d *Driver) loadSecret(ctx context.Context, tx conn) error {
	var sec string
	err := tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'receipt_secret'`).Scan(&sec)
	if errors.Is(err, sql.ErrNoRows) {
		d.secret = make([]byte, 32)
		if _, err := rand.Read(d.secret); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES ('receipt_secret', ?)`, hex.EncodeToString(d.secret))
		return err
	}
	if err != nil {
		return err
	}
	d.secret, err = hex.DecodeString(sec)
	return err
}
