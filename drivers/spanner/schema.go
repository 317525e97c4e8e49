package spanner

import (
	"context"
	"fmt"
	"strings"
	"time"

	database "cloud.google.com/go/spanner/admin/database/apiv1"
	"cloud.google.com/go/spanner/admin/database/apiv1/databasepb"
	instance "cloud.google.com/go/spanner/admin/instance/apiv1"
	"cloud.google.com/go/spanner/admin/instance/apiv1/instancepb"
	"google.golang.org/api/option"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// shards spreads the time-ordered secondary indexes over key ranges: a message's shard
// comes from a hash of its id, so index entries of messages sent at the same moment land
// in different ranges instead of all at the index's end.
const shards = 16

// schema is the database's tables, one statement per table or index, each created when
// missing. Everything a queue owns is interleaved in its Queues row and deleted with it.
// Queues.PurgeCommitted is the commit timestamp of the last purge: messages committed
// before it are purged, whether or not the purge's partitioned delete reached them yet.
// See the backend guide (docs/backends/spanner.md) for the reasoning.
var schema = []struct{ name, ddl string }{
	{"Queues", `CREATE TABLE Queues (
	QueueName    STRING(80) NOT NULL,
	Fifo         BOOL NOT NULL,
	Attributes   STRING(MAX) NOT NULL,
	Tags         STRING(MAX) NOT NULL,
	CreatedAt    TIMESTAMP NOT NULL,
	LastModified TIMESTAMP NOT NULL,
	LastPurge    TIMESTAMP,
	PurgeCommitted TIMESTAMP OPTIONS (allow_commit_timestamp = true),
) PRIMARY KEY (QueueName)`},
	// Part is the message id for standard queues (random: sends spread over the key
	// space) and the group id for FIFO queues, where Seq orders the group. Committed,
	// the commit timestamp of the row's insert, orders FIFO groups by their heads' age;
	// it is only stored in the index, never a key, so it makes no hot spot.
	{"Messages", `CREATE TABLE Messages (
	QueueName       STRING(80) NOT NULL,
	Part            STRING(MAX) NOT NULL,
	Seq             INT64 NOT NULL,
	Shard           INT64 NOT NULL,
	MessageId       STRING(MAX) NOT NULL,
	Body            STRING(MAX) NOT NULL,
	Attrs           BYTES(MAX),
	SysAttrs        BYTES(MAX),
	SenderId        STRING(MAX),
	SentAt          TIMESTAMP NOT NULL,
	EnqueuedAt      TIMESTAMP NOT NULL,
	VisibleAt       TIMESTAMP NOT NULL,
	Token           STRING(36),
	ReceivedAt      TIMESTAMP,
	ReceiveCount    INT64 NOT NULL,
	FirstReceivedAt TIMESTAMP,
	GroupId         STRING(MAX),
	DedupId         STRING(MAX),
	DlqSource       STRING(MAX),
	Committed       TIMESTAMP NOT NULL OPTIONS (allow_commit_timestamp = true),
) PRIMARY KEY (QueueName, Part, Seq), INTERLEAVE IN PARENT Queues ON DELETE CASCADE`},
	{"MessagesByVisible", `CREATE INDEX MessagesByVisible ON Messages (QueueName, Shard, VisibleAt)
	STORING (EnqueuedAt, GroupId, Token, Committed), INTERLEAVE IN Queues`},
	// One row per FIFO group: the next sequence number, and until when a message of the
	// group is in flight (BusyTo: the highest sequence number that may be).
	{"FifoGroups", `CREATE TABLE FifoGroups (
	QueueName STRING(80) NOT NULL,
	GroupId   STRING(MAX) NOT NULL,
	NextSeq   INT64 NOT NULL,
	BusyUntil TIMESTAMP NOT NULL,
	BusyTo    INT64 NOT NULL,
) PRIMARY KEY (QueueName, GroupId), INTERLEAVE IN PARENT Queues ON DELETE CASCADE`},
	{"Dedup", `CREATE TABLE Dedup (
	QueueName STRING(80) NOT NULL,
	Scope     STRING(MAX) NOT NULL,
	DedupId   STRING(MAX) NOT NULL,
	Shard     INT64 NOT NULL,
	MessageId STRING(MAX) NOT NULL,
	Seq       INT64 NOT NULL,
	ExpiresAt TIMESTAMP NOT NULL,
) PRIMARY KEY (QueueName, Scope, DedupId), INTERLEAVE IN PARENT Queues ON DELETE CASCADE`},
	{"DedupByExpiry", `CREATE INDEX DedupByExpiry ON Dedup (QueueName, Shard, ExpiresAt), INTERLEAVE IN Queues`},
	{"ReceiveAttempts", `CREATE TABLE ReceiveAttempts (
	QueueName STRING(80) NOT NULL,
	AttemptId STRING(MAX) NOT NULL,
	Shard     INT64 NOT NULL,
	Claimed   STRING(MAX) NOT NULL,
	ExpiresAt TIMESTAMP NOT NULL,
) PRIMARY KEY (QueueName, AttemptId), INTERLEAVE IN PARENT Queues ON DELETE CASCADE`},
	{"AttemptsByExpiry", `CREATE INDEX AttemptsByExpiry ON ReceiveAttempts (QueueName, Shard, ExpiresAt), INTERLEAVE IN Queues`},
	{"DeletedQueues", `CREATE TABLE DeletedQueues (
	Name      STRING(80) NOT NULL,
	DeletedAt TIMESTAMP NOT NULL,
) PRIMARY KEY (Name)`},
	// Move tasks outlive nothing but their source queue; DeleteQueue deletes them. The
	// handle is random, so the table has no hot end.
	{"MoveTasks", `CREATE TABLE MoveTasks (
	Handle      STRING(MAX) NOT NULL,
	Source      STRING(80) NOT NULL,
	Destination STRING(MAX) NOT NULL,
	Rate        INT64,
	Started     TIMESTAMP NOT NULL,
	ToMove      INT64 NOT NULL,
	Moved       INT64 NOT NULL,
	Status      STRING(16) NOT NULL,
	Failure     STRING(MAX) NOT NULL,
	Owner       STRING(MAX) NOT NULL,
	LeaseUntil  TIMESTAMP NOT NULL,
	Ord         INT64 NOT NULL,
) PRIMARY KEY (Handle)`},
	// Ord numbers a source's tasks in the order they started.
	{"MoveTasksBySource", `CREATE INDEX MoveTasksBySource ON MoveTasks (Source, Ord DESC)`},
	// Values the driver keeps for the whole database: the receipt handle key (see
	// loadReceiptKey).
	{"Meta", `CREATE TABLE Meta (
	Name  STRING(64) NOT NULL,
	Value BYTES(MAX) NOT NULL,
) PRIMARY KEY (Name)`},
}

// ensureDatabase creates, against an emulator, a missing instance and database, and
// everywhere the missing tables and indexes, in one schema update.
func (d *Driver) ensureDatabase(ctx context.Context, o Options, opts []option.ClientOption) error {
	if d.emulator != "" {
		ic, err := instance.NewInstanceAdminClient(ctx, opts...)
		if err != nil {
			return mapErr(ctx, err, "instance admin client")
		}
		defer ic.Close()
		op, err := ic.CreateInstance(ctx, &instancepb.CreateInstanceRequest{
			Parent: "projects/" + o.Project, InstanceId: o.Instance,
			Instance: &instancepb.Instance{Config: "projects/" + o.Project + "/instanceConfigs/emulator-config",
				DisplayName: o.Instance, NodeCount: 1}})
		if err == nil {
			_, err = op.Wait(ctx)
		}
		if err != nil && status.Code(err) != codes.AlreadyExists {
			return mapErr(ctx, err, "create emulator instance "+o.Instance)
		}
	}
	dc, err := database.NewDatabaseAdminClient(ctx, opts...)
	if err != nil {
		return mapErr(ctx, err, "database admin client")
	}
	defer dc.Close()
	got, err := dc.GetDatabaseDdl(ctx, &databasepb.GetDatabaseDdlRequest{Database: d.db})
	if status.Code(err) == codes.NotFound && d.emulator != "" {
		op, cerr := dc.CreateDatabase(ctx, &databasepb.CreateDatabaseRequest{
			Parent:          "projects/" + o.Project + "/instances/" + o.Instance,
			CreateStatement: "CREATE DATABASE `" + o.Database + "`"})
		if cerr == nil {
			_, cerr = op.Wait(ctx)
		}
		if cerr != nil && status.Code(cerr) != codes.AlreadyExists {
			return mapErr(ctx, cerr, "create emulator database "+d.db)
		}
		got, err = dc.GetDatabaseDdl(ctx, &databasepb.GetDatabaseDdlRequest{Database: d.db})
	}
	if err != nil {
		return mapErr(ctx, err, "read schema of "+d.db)
	}
	// Spanner runs one schema change at a time and refuses the others, so gateways that
	// start together on a new database (a deployment's replicas) take turns: each creates
	// what is still missing, and one refused waits for the running change and looks again.
	wait := schemaRetryFirst
	deadline := time.Now().Add(schemaWaitMax)
	for {
		missing := missingObjects(got.Statements)
		if len(missing) == 0 {
			return nil
		}
		op, err := dc.UpdateDatabaseDdl(ctx, &databasepb.UpdateDatabaseDdlRequest{Database: d.db, Statements: missing})
		if err == nil {
			err = op.Wait(ctx)
		}
		if err == nil {
			return nil
		}
		switch status.Code(err) {
		case codes.AlreadyExists, codes.FailedPrecondition, codes.Aborted:
		default:
			return mapErr(ctx, err, fmt.Sprintf("create schema in %s", d.db))
		}
		if time.Now().After(deadline) {
			return mapErr(ctx, err, fmt.Sprintf("create schema in %s (%d of %d objects missing after %v of concurrent schema changes)",
				d.db, len(missing), len(schema), schemaWaitMax))
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return mapErr(ctx, ctx.Err(), fmt.Sprintf("create schema in %s", d.db))
		}
		wait = min(2*wait, schemaRetryMax)
		if got, err = dc.GetDatabaseDdl(ctx, &databasepb.GetDatabaseDdlRequest{Database: d.db}); err != nil {
			return mapErr(ctx, err, "read schema of "+d.db)
		}
	}
}

// How long a gateway waits for other gateways' schema changes, and how often it looks.
const (
	schemaWaitMax    = 5 * time.Minute
	schemaRetryFirst = 50 * time.Millisecond
	schemaRetryMax   = 2 * time.Second
)

// missingObjects returns the DDL of the schema's tables and indexes that statements (a
// database's DDL) lacks.
func missingObjects(statements []string) []string {
	have := map[string]bool{}
	for _, s := range statements {
		f := strings.Fields(s)
		if len(f) >= 3 && f[0] == "CREATE" && (f[1] == "TABLE" || f[1] == "INDEX") {
			have[f[2]] = true
		}
	}
	var missing []string
	for _, s := range schema {
		if !have[s.name] {
			missing = append(missing, s.ddl)
		}
	}
	return missing
}
