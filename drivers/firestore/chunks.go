package firestore

import (
	"bytes"
	"encoding/gob"
	"fmt"

	fs "cloud.google.com/go/firestore"

	"github.com/anysqs/anysqs/drivers"
)

// A message whose document would pass inlineBytes keeps its body and attributes in chunk
// documents, <p>_store/<qid>.<mi>/chunks/<message doc id>.<i>, written, moved and deleted
// in the same transactions as the message document: a Firestore document holds at most
// 1 MiB, and SQS messages may be 1 MiB of body plus attributes.
const (
	inlineBytes = 1_000_000
	chunkBytes  = 700_000
	maxPayload  = 2 << 20 // far above what the gateway lets through
	// moveBudget bounds the chunk bytes one transaction moves (a commit carries at most
	// 10 MiB); messages beyond it wait for the next call.
	moveBudget = 4 << 20
)

// payload is what chunks hold.
type payload struct {
	Body       string
	Attrs, Sys map[string]attrDoc
}

type chunkDoc struct {
	Data []byte `firestore:"d"`
}

func (d *Driver) chunkRef(q *queueDoc, docID string, i int64) *fs.DocumentRef {
	return d.store().Doc(q.QID + "." + q.MI).Collection("chunks").Doc(fmt.Sprintf("%s.%d", docID, i))
}

func (d *Driver) chunkRefs(q *queueDoc, docID string, n int64) []*fs.DocumentRef {
	refs := make([]*fs.DocumentRef, n)
	for i := range refs {
		refs[i] = d.chunkRef(q, docID, int64(i))
	}
	return refs
}

// split moves m's body and attributes into chunks, when its document would be too big.
func split(path string, m *msgDoc) ([][]byte, error) {
	if docSize(path, m) <= inlineBytes {
		return nil, nil
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(payload{Body: m.Body, Attrs: m.Attrs, Sys: m.Sys}); err != nil {
		return nil, err
	}
	if buf.Len() > maxPayload {
		return nil, fmt.Errorf("message of %d bytes is too large", buf.Len())
	}
	var chunks [][]byte
	for b := buf.Bytes(); len(b) > 0; {
		n := min(chunkBytes, len(b))
		chunks = append(chunks, b[:n])
		b = b[n:]
	}
	m.Body, m.Attrs, m.Sys, m.Chunks = "", nil, nil, int64(len(chunks))
	return chunks, nil
}

// writeChunks queues the creation of a message's chunks.
func (d *Driver) writeChunks(w *writes, q *queueDoc, docID string, chunks [][]byte) {
	for i, c := range chunks {
		w.create(d.chunkRef(q, docID, int64(i)), chunkDoc{Data: c})
	}
}

// readChunks reads a chunked message's chunks with get (in or outside a transaction).
func (d *Driver) readChunks(get func([]*fs.DocumentRef) ([]*fs.DocumentSnapshot, error), q *queueDoc, docID string, m *msgDoc) ([][]byte, error) {
	if m.Chunks == 0 {
		return nil, nil
	}
	snaps, err := get(d.chunkRefs(q, docID, m.Chunks))
	if err != nil {
		return nil, err
	}
	out := make([][]byte, len(snaps))
	for i, s := range snaps {
		var c chunkDoc
		if !s.Exists() {
			return nil, drivers.Errorf(drivers.KindInternal, "firestore: message %s lacks chunk %d", m.MID, i)
		}
		if err := s.DataTo(&c); err != nil {
			return nil, drivers.Wrap(drivers.KindInternal, err, "firestore: chunk of message "+m.MID)
		}
		out[i] = c.Data
	}
	return out, nil
}

// fill puts a chunked message's body and attributes back into m.
func (d *Driver) fill(get func([]*fs.DocumentRef) ([]*fs.DocumentSnapshot, error), q *queueDoc, docID string, m *msgDoc) error {
	chunks, err := d.readChunks(get, q, docID, m)
	if err != nil || chunks == nil {
		return err
	}
	var p payload
	if err := gob.NewDecoder(bytes.NewReader(bytes.Join(chunks, nil))).Decode(&p); err != nil {
		return drivers.Wrap(drivers.KindInternal, err, "firestore: chunks of message "+m.MID)
	}
	m.Body, m.Attrs, m.Sys = p.Body, p.Attrs, p.Sys
	return nil
}

func chunkedBytes(chunks [][]byte) int {
	n := 0
	for _, c := range chunks {
		n += len(c)
	}
	return n
}
