package drivertest

import (
	"context"
	"errors"
	"time"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
)

var describeCases = []testCase{
	{Caps: one("describe"), Name: "declarations-valid", Run: func(e *env) {
		desc, err := e.d.Describe(e.ctx)
		if err != nil {
			e.t.Fatalf("Describe: %v", err)
		}
		if desc.Name == "" || desc.Version == "" {
			e.t.Fatalf("Describe: Name %q, Version %q: both must be set", desc.Name, desc.Version)
		}
		if err := capabilities.Validate(desc.Capabilities); err != nil {
			e.t.Fatalf("Describe: declarations: %v", err)
		}
		if err := desc.Check(); err != nil {
			e.t.Fatalf("Describe: %v", err)
		}
	}},
	{Caps: one("describe"), Name: "abilities-match-description", Run: func(e *env) {
		// An ability the description disclaims answers KindUnsupported; one it claims
		// answers without that kind. Over an RPC every method exists, so this is how a
		// gateway (and a reader of the report) can trust the description.
		desc := e.description
		_, err := e.d.ListMoveTasks(e.ctx, e.name("none", false), 1)
		checkAbility(e, "ListMoveTasks", desc.MoveTaskStore, err)
		watch := e.d.WatchActivity(e.ctx, drivers.WatchActivityRequest{Name: e.name("none", false), Until: e.base})
		checkAbility(e, "WatchActivity", desc.Activity == drivers.ActivityWatch, watch)
		if err := e.d.Ping(e.ctx); err != nil {
			e.t.Fatalf("Ping: %v", err)
		}
		if _, err := e.d.Metrics(e.ctx); err != nil {
			e.t.Fatalf("Metrics: %v", err)
		}
	}},
	{Caps: one("describe"), Name: "cancelled-context", Run: func(e *env) {
		q := e.standard("q")
		ctx, cancel := context.WithCancel(e.ctx)
		cancel()
		_, err := e.d.SendMessages(ctx, drivers.SendMessagesRequest{Name: q, Now: e.base, Entries: []drivers.SendEntry{msg("x")}})
		if !errors.Is(err, context.Canceled) {
			e.t.Fatalf("SendMessages with a cancelled context: %v, want context.Canceled", err)
		}
		_, err = e.d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: q, Now: e.base, MaxMessages: 1, VisibilityTimeout: 30})
		if !errors.Is(err, context.Canceled) {
			e.t.Fatalf("ReceiveMessages with a cancelled context: %v, want context.Canceled", err)
		}
		e.expectStats(q, time.Second, drivers.QueueStats{})
	}},
	{Caps: one("describe"), Name: "await-activity-returns", Run: func(e *env) {
		ctx, cancel := context.WithCancel(e.ctx)
		defer cancel()
		// A short timeout: the case checks that the call returns with a sane result, not how fast.
		res, err := e.d.AwaitActivity(ctx, drivers.AwaitActivityRequest{Timeout: 10 * time.Millisecond})
		notifies := e.description.Activity == drivers.ActivityNotify || e.description.Activity == drivers.ActivityWatch
		checkAbility(e, "AwaitActivity", notifies, err)
		if !notifies && len(res.Queues) > 0 {
			e.t.Fatalf("AwaitActivity: unsupported but queues %v", res.Queues)
		}
	}},
}

var queueCases = []testCase{
	{Caps: one(capabilities.QueueCreate), Name: "name-reuse-waits-after-delete", Run: func(e *env) {
		e.needs(2 * time.Minute)
		q := e.standard("q")
		create := func(at time.Duration) error {
			_, err := e.d.CreateQueue(e.ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: q,
				Attributes: StandardAttributes(), Tags: map[string]string{}, CreatedAt: e.at(at), LastModified: e.at(at)}})
			return err
		}
		if err := e.d.DeleteQueue(e.ctx, drivers.DeleteQueueRequest{Name: q, Now: e.at(time.Second)}); err != nil {
			e.t.Fatalf("DeleteQueue: %v", err)
		}
		expectKind(e.t, "CreateQueue 30 s after the delete", create(31*time.Second), drivers.KindDeletedRecently)
		if e.h.Reopen != nil {
			e.restart()
			expectKind(e.t, "CreateQueue 50 s after the delete, after a restart", create(51*time.Second), drivers.KindDeletedRecently)
		}
		// A sweep before the delay is over keeps the record; one after may drop it.
		if _, err := e.d.Sweep(e.ctx, drivers.SweepRequest{Now: e.at(55 * time.Second)}); err != nil {
			e.t.Fatalf("Sweep: %v", err)
		}
		expectKind(e.t, "CreateQueue 58 s after the delete", create(59*time.Second), drivers.KindDeletedRecently)
		if err := create(61 * time.Second); err != nil {
			e.t.Fatalf("CreateQueue 60 s after the delete: %v", err)
		}
		if _, err := e.d.Sweep(e.ctx, drivers.SweepRequest{Now: e.at(2 * time.Minute)}); err != nil {
			e.t.Fatalf("Sweep: %v", err)
		}
	}},
	{Caps: one(capabilities.QueueCreate), Name: "create-get-existing", Run: func(e *env) {
		attrs := StandardAttributes()
		attrs.DelaySeconds = 5
		attrs.Policy = `{"Version":"2012-10-17"}`
		name := e.name("q", false)
		q := drivers.Queue{Name: name, Attributes: attrs, Tags: map[string]string{"team": "a"}, CreatedAt: e.base, LastModified: e.base}
		res, err := e.d.CreateQueue(e.ctx, drivers.CreateQueueRequest{Queue: q})
		if err != nil || res.Existed {
			e.t.Fatalf("CreateQueue: %v, Existed %v", err, res.Existed)
		}
		checkQueue(e, "CreateQueue", res.Queue, q)
		got, err := e.d.GetQueue(e.ctx, drivers.GetQueueRequest{Name: name})
		if err != nil {
			e.t.Fatalf("GetQueue: %v", err)
		}
		checkQueue(e, "GetQueue", got, q)
		other := q
		other.Attributes.DelaySeconds = 9
		again, err := e.d.CreateQueue(e.ctx, drivers.CreateQueueRequest{Queue: other})
		if err != nil || !again.Existed {
			e.t.Fatalf("CreateQueue again: %v, Existed %v (want true)", err, again.Existed)
		}
		checkQueue(e, "CreateQueue again returns the stored queue", again.Queue, q)
	}},
	{Caps: one(capabilities.QueueCreate), Name: "get-missing", Run: func(e *env) {
		_, err := e.d.GetQueue(e.ctx, drivers.GetQueueRequest{Name: e.name("missing", false)})
		expectKind(e.t, "GetQueue of a missing queue", err, drivers.KindNotFound)
	}},
	{Caps: one(capabilities.QueueCreate), Name: "list-prefix-paging", Run: func(e *env) {
		var names []string
		for range 5 {
			names = append(names, e.standard("list"))
		}
		e.fifo("other")
		prefix := e.prefix + "list"
		all, err := e.d.ListQueues(e.ctx, drivers.ListQueuesRequest{Prefix: prefix})
		if err != nil {
			e.t.Fatalf("ListQueues: %v", err)
		}
		if got := queueNames(all.Queues); fmtList(got) != fmtList(names) || all.More {
			e.t.Fatalf("ListQueues prefix %q: got %v More %v, want %v", prefix, got, all.More, names)
		}
		var paged []string
		after := ""
		for page := 0; ; page++ {
			res, err := e.d.ListQueues(e.ctx, drivers.ListQueuesRequest{Prefix: prefix, After: after, Limit: 2})
			if err != nil {
				e.t.Fatalf("ListQueues page %d: %v", page, err)
			}
			if len(res.Queues) > 2 || page > 5 {
				e.t.Fatalf("ListQueues page %d: %d queues with Limit 2", page, len(res.Queues))
			}
			paged = append(paged, queueNames(res.Queues)...)
			if !res.More {
				break
			}
			after = res.Queues[len(res.Queues)-1].Name
		}
		if fmtList(paged) != fmtList(names) {
			e.t.Fatalf("ListQueues paged: got %v, want %v", paged, names)
		}
	}},
	{Caps: one(capabilities.QueueCreate), Name: "set-attributes", Run: func(e *env) {
		q := e.standard("q")
		attrs := StandardAttributes()
		attrs.VisibilityTimeout = 77
		attrs.RedrivePolicy = &drivers.RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 3}
		attrs.RedriveAllowPolicy = `{"redrivePermission":"allowAll"}`
		if err := e.d.SetQueueAttributes(e.ctx, drivers.SetQueueAttributesRequest{Name: q, Attributes: attrs, Now: e.at(time.Second)}); err != nil {
			e.t.Fatalf("SetQueueAttributes: %v", err)
		}
		got, err := e.d.GetQueue(e.ctx, drivers.GetQueueRequest{Name: q})
		if err != nil {
			e.t.Fatalf("GetQueue: %v", err)
		}
		checkQueue(e, "after SetQueueAttributes", got, drivers.Queue{Name: q, Attributes: attrs, CreatedAt: e.base, LastModified: e.at(time.Second), Tags: map[string]string{}})
		err = e.d.SetQueueAttributes(e.ctx, drivers.SetQueueAttributesRequest{Name: e.name("missing", false), Attributes: attrs, Now: e.base})
		expectKind(e.t, "SetQueueAttributes of a missing queue", err, drivers.KindNotFound)
	}},
	{Caps: one(capabilities.QueueTags), Name: "set-remove", Run: func(e *env) {
		q := e.standard("q")
		if err := e.d.UpdateQueueTags(e.ctx, drivers.UpdateQueueTagsRequest{Name: q, Set: map[string]string{"a": "1", "b": "2"}}); err != nil {
			e.t.Fatalf("UpdateQueueTags: %v", err)
		}
		if err := e.d.UpdateQueueTags(e.ctx, drivers.UpdateQueueTagsRequest{Name: q, Set: map[string]string{"b": "3", "c": "4"}, Remove: []string{"a", "zz"}}); err != nil {
			e.t.Fatalf("UpdateQueueTags: %v", err)
		}
		got, err := e.d.GetQueue(e.ctx, drivers.GetQueueRequest{Name: q})
		if err != nil {
			e.t.Fatalf("GetQueue: %v", err)
		}
		if fmtMap(got.Tags) != fmtMap(map[string]string{"b": "3", "c": "4"}) {
			e.t.Fatalf("tags: got %v, want map[b:3 c:4]", got.Tags)
		}
		err = e.d.UpdateQueueTags(e.ctx, drivers.UpdateQueueTagsRequest{Name: e.name("missing", false), Set: map[string]string{"a": "1"}})
		expectKind(e.t, "UpdateQueueTags of a missing queue", err, drivers.KindNotFound)
	}},
	{Caps: one(capabilities.QueueCreate), Name: "delete", Run: func(e *env) {
		e.needs(e.after(drivers.QueueNameReuseDelay + time.Second))
		q := e.standard("q")
		e.send(q, 0, msg("one"))
		if err := e.d.DeleteQueue(e.ctx, drivers.DeleteQueueRequest{Name: q, Now: e.at(0)}); err != nil {
			e.t.Fatalf("DeleteQueue: %v", err)
		}
		_, err := e.d.GetQueue(e.ctx, drivers.GetQueueRequest{Name: q})
		expectKind(e.t, "GetQueue after DeleteQueue", err, drivers.KindNotFound)
		err = e.d.DeleteQueue(e.ctx, drivers.DeleteQueueRequest{Name: q, Now: e.at(0)})
		expectKind(e.t, "DeleteQueue twice", err, drivers.KindNotFound)
		// Recreating the name gives an empty queue: the messages went with the old one.
		again := e.after(drivers.QueueNameReuseDelay + time.Second)
		if _, err := e.d.CreateQueue(e.ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: q, Attributes: StandardAttributes(), CreatedAt: e.at(again), LastModified: e.at(again)}}); err != nil {
			e.t.Fatalf("CreateQueue again: %v", err)
		}
		e.expectStats(q, again, drivers.QueueStats{})
		e.expectBodies("receive from recreated queue", e.receive(q, again, 10, 30).Messages)
	}},
	{Caps: one(capabilities.QueueCreate), Name: "missing-queue-operations", Run: func(e *env) {
		q := e.name("missing", false)
		now := e.base
		_, err := e.d.SendMessages(e.ctx, drivers.SendMessagesRequest{Name: q, Now: now, Entries: []drivers.SendEntry{msg("x")}})
		expectKind(e.t, "SendMessages", err, drivers.KindNotFound)
		_, err = e.d.ReceiveMessages(e.ctx, drivers.ReceiveMessagesRequest{Name: q, Now: now, MaxMessages: 1, VisibilityTimeout: 30})
		expectKind(e.t, "ReceiveMessages", err, drivers.KindNotFound)
		_, err = e.d.DeleteMessages(e.ctx, drivers.DeleteMessagesRequest{Name: q, Now: now, Entries: []drivers.DeleteEntry{{EntryID: "a", ReceiptHandle: "x"}}})
		expectKind(e.t, "DeleteMessages", err, drivers.KindNotFound)
		_, err = e.d.ChangeVisibility(e.ctx, drivers.ChangeVisibilityRequest{Name: q, Now: now, Entries: []drivers.ChangeVisibilityEntry{{EntryID: "a", ReceiptHandle: "x"}}})
		expectKind(e.t, "ChangeVisibility", err, drivers.KindNotFound)
		err = e.d.PurgeQueue(e.ctx, drivers.PurgeQueueRequest{Name: q, Now: now})
		expectKind(e.t, "PurgeQueue", err, drivers.KindNotFound)
		_, err = e.d.QueueStats(e.ctx, drivers.QueueStatsRequest{Name: q, Now: now})
		expectKind(e.t, "QueueStats", err, drivers.KindNotFound)
		_, err = e.d.MoveMessages(e.ctx, drivers.MoveMessagesRequest{Source: q, Now: now, Limit: 10})
		expectKind(e.t, "MoveMessages", err, drivers.KindNotFound)
	}},
}

func checkQueue(e *env, what string, got, want drivers.Queue) {
	e.t.Helper()
	if got.Name != want.Name {
		e.t.Fatalf("%s: Name %q, want %q", what, got.Name, want.Name)
	}
	if fmtAttrs(got.Attributes) != fmtAttrs(want.Attributes) {
		e.t.Fatalf("%s: attributes\n got %s\nwant %s", what, fmtAttrs(got.Attributes), fmtAttrs(want.Attributes))
	}
	if want.Tags != nil && fmtMap(got.Tags) != fmtMap(want.Tags) {
		e.t.Fatalf("%s: tags %v, want %v", what, got.Tags, want.Tags)
	}
	// On a service clock the service may stamp both.
	if !e.sameTime(got.CreatedAt, want.CreatedAt) || !e.sameTime(got.LastModified, want.LastModified) {
		e.t.Fatalf("%s: CreatedAt %v LastModified %v, want %v and %v", what, got.CreatedAt, got.LastModified, want.CreatedAt, want.LastModified)
	}
}

func queueNames(qs []drivers.Queue) []string {
	out := make([]string, len(qs))
	for i, q := range qs {
		out[i] = q.Name
	}
	return out
}
