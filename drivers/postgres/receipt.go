package postgres

import (
	"context"
	"encoding/binary"

	"github.com/jackc/pgx/v5"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

// A receipt handle names the row (queue id, message row id) and the receipt token the
// claim wrote into it, sealed with sqsrule.SealHandle under the key in the receipt_key
// table. Everything needed to check it is in the database, so a handle works through
// any gateway instance and after restarts; a later claim writes a new token, which
// makes older handles stale; the seal makes a handle the driver did not issue (a
// guessed row, another schema's) invalid without a read.
type handle struct {
	queueID int32
	id      int64
	token   [16]byte
}

// handleVersion 1 was the same payload unsealed (drivers of schema version 7 and
// earlier); such handles no longer open.
const handleVersion = 2

// payloadLen is version byte + queue id + row id + token.
const payloadLen = 1 + 4 + 8 + 16

func (h handle) seal(key []byte) string {
	b := make([]byte, 0, payloadLen)
	b = append(b, handleVersion)
	b = binary.BigEndian.AppendUint32(b, uint32(h.queueID))
	b = binary.BigEndian.AppendUint64(b, uint64(h.id))
	b = append(b, h.token[:]...)
	return sqsrule.SealHandle(key, b)
}

func openHandle(key []byte, s string) (handle, error) {
	b, ok := sqsrule.OpenHandle(key, s)
	if !ok || len(b) != payloadLen || b[0] != handleVersion {
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

// parsedHandles splits a batch into handles this driver issued (with their entry index)
// and per-entry errors for the others.
type parsedHandles struct {
	ids    []int64
	tokens [][16]byte // uuid, sent in binary
	ords   []int32
	queue  []int32
}

func (d *Driver) parseHandles(n int, get func(i int) string, errs []*drivers.Error) parsedHandles {
	var p parsedHandles
	for i := 0; i < n; i++ {
		h, err := openHandle(d.receiptKey, get(i))
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

// loadReceiptKey reads the schema's receipt handle key, creating it on first use. It
// runs in the migration's transaction, under its lock, so gateways starting together
// agree on one key.
func loadReceiptKey(ctx context.Context, tx pgx.Tx, schema string) ([]byte, error) {
	key, err := sqsrule.NewKey()
	if err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO `+schema+`.receipt_key (id, key) VALUES (1, $1) ON CONFLICT (id) DO NOTHING`, key); err != nil {
		return nil, mapErr(ctx, err, "migrate: receipt key")
	}
	if err := tx.QueryRow(ctx, `SELECT key FROM `+schema+`.receipt_key WHERE id = 1`).Scan(&key); err != nil {
		return nil, mapErr(ctx, err, "migrate: receipt key")
	}
	if len(key) != sqsrule.KeyLen {
		return nil, drivers.Errorf(drivers.KindInternal, "postgres schema %s: the stored receipt key is malformed", schema)
	}
	return key, nil
}
