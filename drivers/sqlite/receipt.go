package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"

	"github.com/anysqs/anysqs/drivers/sqsrule"
)

// A receipt handle seals (sqsrule.SealHandle) version | queue id | message row id |
// receive token. The token is fresh random bytes per receive, stored with the message,
// so a handle names one particular receive. The MAC key is kept in the database, so
// handles survive restarts.
const (
	handleVersion = 1
	tokenLen      = 12
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
	b := make([]byte, 0, payloadLen)
	b = append(b, handleVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(r.queueID))
	b = binary.BigEndian.AppendUint64(b, uint64(r.rowID))
	b = append(b, tok...)
	return sqsrule.SealHandle(d.secret, b)
}

// decodeHandle returns false for any handle this driver did not issue.
func (d *Driver) decodeHandle(h string) (receipt, bool) {
	b, ok := sqsrule.OpenHandle(d.secret, h)
	if !ok || len(b) != payloadLen || b[0] != handleVersion {
		return receipt{}, false
	}
	return receipt{
		queueID: int64(binary.BigEndian.Uint64(b[1:9])),
		rowID:   int64(binary.BigEndian.Uint64(b[9:17])),
		token:   hex.EncodeToString(b[17:payloadLen]),
	}, true
}

// loadSecret reads the receipt handle key, creating it in a new database.
func (d *Driver) loadSecret(ctx context.Context, tx conn) error {
	var sec string
	err := tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'receipt_secret'`).Scan(&sec)
	if errors.Is(err, sql.ErrNoRows) {
		if d.secret, err = sqsrule.NewKey(); err != nil {
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
