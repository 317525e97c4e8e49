package firestore

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	fs "cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

// The data model (docs/backends/firestore.md has the picture). Root collections all
// start with the configured prefix:
//
//	<p>_queues/q_<name>                  a queue: attributes, tags, ids of its storage
//	<p>_store/<qid>/groups/<hash>        FIFO group: sequence counter, in-flight claim, ready hint
//	<p>_store/<qid>/dedup/<hash>         FIFO deduplication record (five minutes)
//	<p>_store/<qid>/attempts/<hash>      FIFO receive attempt (five minutes)
//	<p>_store/<qid>.<mi>/messages/<id>   one document per message
//	<p>_store/<qid>.<mi>/chunks/<id>.<i> body and attributes of a message over 1,000,000 bytes
//	<p>_deleted/q_<name>                 when a queue was deleted (name reuse delay)
//	<p>_cleanup/<id>                     storage of a deleted or purged queue, for Sweep
//	<p>_tasks/<handle>                   message move tasks
//	<p>_meta/receipt                     the receipt handle key
//
// qid is drawn when a queue is created, mi when it is created or purged: a purge moves a
// queue to fresh message storage in one small transaction, and Sweep deletes the old one.

// queueDoc is a queue as stored.
type queueDoc struct {
	Name     string            `firestore:"name"`
	QID      string            `firestore:"qid"`
	MI       string            `firestore:"mi"`
	FIFO     bool              `firestore:"fifo"`
	Attrs    string            `firestore:"attrs"` // drivers.QueueAttributes as JSON
	Tags     map[string]string `firestore:"tags"`
	Created  int64             `firestore:"created"`
	Modified int64             `firestore:"modified"`
	Purged   int64             `firestore:"purged"`
	Shards   int64             `firestore:"shards"`
}

// attrDoc is one message attribute; binary values stay bytes (no base64 growth).
type attrDoc struct {
	Type   string `firestore:"t"`
	String string `firestore:"s,omitempty"`
	Binary []byte `firestore:"b,omitempty"`
}

// msgDoc is one message. Times are gateway-clock Unix nanoseconds.
type msgDoc struct {
	MID      string             `firestore:"mid"`
	Body     string             `firestore:"body"`
	Attrs    map[string]attrDoc `firestore:"at"`
	Sys      map[string]attrDoc `firestore:"sa"`
	Sender   string             `firestore:"snd"`
	Sent     int64              `firestore:"sent"`
	Enq      int64              `firestore:"enq"` // retention runs from here
	Vis      int64              `firestore:"vis"` // visible from here on
	RC       int64              `firestore:"rc"`
	First    int64              `firestore:"fr"`
	Gen      int64              `firestore:"gen"` // claim generation: one per receive
	Claimed  bool               `firestore:"cl"`  // received at least once (in flight, not delayed, while vis is ahead)
	Received int64              `firestore:"rcv"` // the last claim, for the 12-hour cap
	Group    string             `firestore:"grp"`
	Dedup    string             `firestore:"dd"`
	Seq      int64              `firestore:"seq"`
	DLS      string             `firestore:"dls"`
	Shard    int64              `firestore:"sh"`
	Chunks   int64              `firestore:"ck"` // body and attributes in this many chunk documents
}

// groupDoc is one FIFO message group. Ready is never later than the first moment the
// group may have a message to deliver; claims read the group's messages to be exact.
type groupDoc struct {
	Group    string           `firestore:"g"`
	Shard    int64            `firestore:"sh"`
	Last     int64            `firestore:"n"`  // last sequence number issued
	Ready    int64            `firestore:"rd"` // noReady when the group has no message
	InFlight map[string]int64 `firestore:"fl"` // message doc id -> claim generation of the last claim (older drivers block the group on it)
	// Order breaks ties of Ready between groups: the wall clock when the group last
	// became non-empty, so groups sent to at one gateway-clock instant keep send order.
	Order int64 `firestore:"ord"`
}

type dedupDoc struct {
	MID     string `firestore:"mid"`
	Seq     int64  `firestore:"seq"`
	Expires int64  `firestore:"exp"`
}

type attemptDoc struct {
	Docs    []string `firestore:"docs"`
	Gens    []int64  `firestore:"gens"`
	Expires int64    `firestore:"exp"`
}

type deletedDoc struct {
	Name string `firestore:"name"`
	At   int64  `firestore:"at"`
}

// cleanupDoc names a store document whose subcollections Sweep deletes.
type cleanupDoc struct {
	Store string   `firestore:"store"`
	Colls []string `firestore:"colls"`
	At    int64    `firestore:"at"`
}

const noReady = int64(1<<63 - 1)

func (d *Driver) queues() *fs.CollectionRef  { return d.client.Collection(d.prefix + "_queues") }
func (d *Driver) store() *fs.CollectionRef   { return d.client.Collection(d.prefix + "_store") }
func (d *Driver) deleted() *fs.CollectionRef { return d.client.Collection(d.prefix + "_deleted") }
func (d *Driver) cleanup() *fs.CollectionRef { return d.client.Collection(d.prefix + "_cleanup") }
func (d *Driver) tasks() *fs.CollectionRef   { return d.client.Collection(d.prefix + "_tasks") }

// queueID is the document id of a queue name: "q_" keeps names such as "__x__", which
// Firestore reserves, usable.
func queueID(name string) string { return "q_" + name }

func (d *Driver) queueRef(name string) *fs.DocumentRef { return d.queues().Doc(queueID(name)) }

func (d *Driver) messages(q *queueDoc) *fs.CollectionRef {
	return d.store().Doc(q.QID + "." + q.MI).Collection("messages")
}

func (d *Driver) groups(q *queueDoc) *fs.CollectionRef {
	return d.store().Doc(q.QID).Collection("groups")
}

func (d *Driver) dedups(q *queueDoc) *fs.CollectionRef {
	return d.store().Doc(q.QID).Collection("dedup")
}

func (d *Driver) attempts(q *queueDoc) *fs.CollectionRef {
	return d.store().Doc(q.QID).Collection("attempts")
}

// hashID is a document id for an arbitrary string (group, deduplication or attempt id):
// those may hold "/" and need not be valid ids.
func hashID(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(h[:16])
}

// shardOf spreads a key over n shards.
func shardOf(key string, n int64) int64 {
	h := sha256.Sum256([]byte(key))
	return int64(uint64(h[0])<<8|uint64(h[1])) % n
}

func newID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Index is one composite index the driver's queries need.
type Index struct {
	Collection string   // collection id, collection scope
	Fields     []string // field paths, in order, with direction
	For        string   // what uses it
}

func (i Index) String() string {
	return fmt.Sprintf("collection %q, fields (%s)", i.Collection, strings.Join(i.Fields, ", "))
}

// Indexes lists the composite indexes the driver needs on a real database; the guide
// shows them as gcloud commands and a firestore.indexes.json.
var Indexes = []Index{
	{"messages", []string{"sh ASC", "vis ASC", "enq ASC"}, "standard receive per shard; visible count"},
	{"messages", []string{"cl ASC", "sh ASC", "vis ASC", "enq ASC"}, "in-flight and delayed counts"},
	{"messages", []string{"sh ASC", "enq ASC"}, "retention sweep per shard"},
	{"messages", []string{"grp ASC", "seq ASC"}, "FIFO: a group's messages in sequence order"},
	{"groups", []string{"sh ASC", "rd ASC", "ord ASC"}, "FIFO receive: groups ready, oldest first"},
	{"tasks", []string{"qid ASC", "ord DESC"}, "ListMessageMoveTasks"},
	{"tasks", []string{"status ASC", "lease ASC"}, "adopting move tasks whose gateway stopped"},
}

// checkIndexes runs every indexed query once, with limit 1, on an empty collection. A
// real database answers FAILED_PRECONDITION for a query whose index is missing; the
// emulator does not enforce indexes, so there the check passes whatever exists.
func (d *Driver) checkIndexes(ctx context.Context) error {
	probe := &queueDoc{QID: "index-check", MI: "0", Shards: 2}
	msgs, groups := d.messages(probe), d.groups(probe)
	all := []int64{0, 1}
	type check struct {
		index int
		run   func() error
	}
	docs := func(q fs.Query) func() error {
		return func() error { _, err := q.Limit(1).Documents(ctx).GetAll(); return err }
	}
	count := func(q fs.Query) func() error {
		return func() error { _, err := q.NewAggregationQuery().WithCount("n").Get(ctx); return err }
	}
	checks := []check{
		{0, docs(msgs.Where("sh", "in", all).Where("vis", "<=", int64(1)).Where("enq", ">", int64(0)).OrderBy("vis", fs.Asc))},
		{0, count(msgs.Where("sh", "in", all).Where("vis", "<=", int64(1)).Where("enq", ">", int64(0)))},
		{1, count(msgs.Where("cl", "==", true).Where("sh", "in", all).Where("vis", ">", int64(1)).Where("enq", ">", int64(0)))},
		{2, docs(msgs.Where("sh", "==", int64(0)).Where("enq", "<=", int64(1)))},
		{3, docs(msgs.Where("grp", "==", "g").OrderBy("seq", fs.Asc))},
		{4, docs(groups.Where("sh", "in", all).Where("rd", "<=", int64(1)).OrderBy("rd", fs.Asc).OrderBy("ord", fs.Asc))},
		{5, docs(d.tasks().Where("qid", "==", "q").OrderBy("ord", fs.Desc))},
		{6, docs(d.tasks().Where("status", "==", drivers.MoveTaskRunning).Where("lease", "<", int64(1)))},
	}
	for _, c := range checks {
		err := c.run()
		if err == nil {
			continue
		}
		if status.Code(err) == codes.FailedPrecondition {
			return fmt.Errorf("firestore: missing composite index %s, needed for %s; create it as docs/backends/firestore.md shows: %w",
				Indexes[c.index], Indexes[c.index].For, err)
		}
		return fmt.Errorf("firestore: index check: %w", classify(ctx, err, "index check"))
	}
	return nil
}

// loadSecret reads the receipt handle key shared by every gateway on this storage,
// creating it on first use.
func (d *Driver) loadSecret(ctx context.Context) error {
	ref := d.client.Collection(d.prefix + "_meta").Doc("receipt")
	key, err := sqsrule.NewKey()
	if err != nil {
		return err
	}
	_, err = ref.Create(ctx, map[string]any{"key": key})
	if err != nil && status.Code(err) != codes.AlreadyExists {
		return fmt.Errorf("firestore: receipt key: %w", classify(ctx, err, "receipt key"))
	}
	snap, err := ref.Get(ctx)
	if err != nil {
		return fmt.Errorf("firestore: receipt key: %w", classify(ctx, err, "receipt key"))
	}
	b, ok := snap.Data()["key"].([]byte)
	if !ok || len(b) != sqsrule.KeyLen {
		return fmt.Errorf("firestore: receipt key in %s is malformed", ref.Path)
	}
	d.secret = b
	return nil
}
