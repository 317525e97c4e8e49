package spanner

import (
	"context"
	"encoding/binary"
	"hash/fnv"

	"cloud.google.com/go/spanner"
	"google.golang.org/grpc/codes"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

// A receipt handle names the message row (queue, part, sequence) and the token the claim
// wrote into it, sealed with sqsrule.SealHandle under the key in the Meta table.
// Everything needed to check it is in the database, so a handle works through any
// gateway and after restarts; a later claim writes a new token, which makes older
// handles stale; the seal makes a handle the driver did not issue (a guessed row,
// another database's) invalid without a read.
type handle struct {
	queueHash uint32 // of the queue name: a handle of another queue is not one of this queue's
	part      string
	seq       int64
	token     string
}

// handleVersion 1 was the same payload unsealed (drivers before the Meta table); such
// handles no longer open.
const handleVersion = 2

func queueHash(name string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(name))
	return h.Sum32()
}

func (h handle) seal(key []byte) string {
	b := make([]byte, 0, 1+4+binary.MaxVarintLen64*2+len(h.part)+len(h.token))
	b = append(b, handleVersion)
	b = binary.BigEndian.AppendUint32(b, h.queueHash)
	b = binary.AppendUvarint(b, uint64(len(h.part)))
	b = append(b, h.part...)
	b = binary.AppendVarint(b, h.seq)
	b = append(b, h.token...)
	return sqsrule.SealHandle(key, b)
}

// openHandle returns the handle s names if this driver sealed it under key for queue.
func openHandle(key []byte, queue, s string) (handle, *drivers.Error) {
	b, ok := sqsrule.OpenHandle(key, s)
	if !ok || len(b) < 6 || b[0] != handleVersion {
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

// receiptKeyName is the Meta row of the receipt handle key.
const receiptKeyName = "receipt_key"

// loadReceiptKey reads the receipt handle key shared by every gateway on the database,
// creating it on first use. The read locks the row, so of gateways opening together one
// inserts and the others, aborted and retried, read its key.
func (d *Driver) loadReceiptKey(ctx context.Context) error {
	fresh, err := sqsrule.NewKey()
	if err != nil {
		return err
	}
	var key []byte
	err = d.rw(ctx, "receipt key", func(ctx context.Context, tx *spanner.ReadWriteTransaction) error {
		r, err := tx.ReadRow(ctx, "Meta", spanner.Key{receiptKeyName}, []string{"Value"})
		if spanner.ErrCode(err) == codes.NotFound {
			key = fresh
			return tx.BufferWrite([]*spanner.Mutation{spanner.Insert("Meta", []string{"Name", "Value"}, []any{receiptKeyName, fresh})})
		}
		if err != nil {
			return err
		}
		return r.Columns(&key)
	})
	if err != nil {
		return err
	}
	if len(key) != sqsrule.KeyLen {
		return drivers.Errorf(drivers.KindInternal, "spanner: the receipt key in %s is malformed", d.db)
	}
	d.receiptKey = key
	return nil
}
