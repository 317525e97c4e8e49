package plugin

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/anysqs/anysqs/drivers"
	pb "github.com/anysqs/anysqs/drivers/plugin/internal/driverpb"
)

// server is the plugin side: it opens the plugin's driver when the host sends the
// configuration, then answers every call with it.
type server struct {
	pb.UnimplementedDriverServer
	open drivers.Opener

	mu  sync.Mutex
	drv drivers.Driver
}

var empty = &pb.Empty{}

func (s *server) driver() (drivers.Driver, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.drv == nil {
		return nil, toStatus(drivers.Errorf(drivers.KindInternal, "plugin: the driver is not open (the host calls Open first)"))
	}
	return s.drv, nil
}

func (s *server) Open(ctx context.Context, req *pb.OpenRequest) (*pb.Empty, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.drv != nil {
		return nil, toStatus(drivers.Errorf(drivers.KindFailedPrecondition, "plugin: the driver is open already"))
	}
	var raw map[string]any
	if len(req.GetConfigJson()) > 0 {
		if err := json.Unmarshal(req.GetConfigJson(), &raw); err != nil {
			return nil, toStatus(drivers.Wrap(drivers.KindInvalidArgument, err, "plugin: config"))
		}
	}
	if raw == nil {
		raw = map[string]any{}
	}
	d, err := s.open(ctx, raw)
	if err != nil {
		return nil, toStatus(err)
	}
	s.drv = d
	return empty, nil
}

func (s *server) Close(context.Context, *pb.Empty) (*pb.Empty, error) {
	s.mu.Lock()
	d := s.drv
	s.drv = nil
	s.mu.Unlock()
	if d == nil {
		return empty, nil
	}
	return empty, toStatus(d.Close())
}

// closeDriver closes the driver when the host goes away without calling Close.
func (s *server) closeDriver() {
	_, _ = s.Close(context.Background(), nil)
}

// call runs f on the open driver and encodes its error.
func call[T any](s *server, f func(d drivers.Driver) (T, error)) (T, error) {
	d, err := s.driver()
	if err != nil {
		var zero T
		return zero, err
	}
	v, err := f(d)
	if err != nil {
		var zero T
		return zero, toStatus(err)
	}
	return v, nil
}

func (s *server) Describe(ctx context.Context, _ *pb.Empty) (*pb.Description, error) {
	return call(s, func(d drivers.Driver) (*pb.Description, error) {
		desc, err := d.Describe(ctx)
		return toDescription(desc), err
	})
}

func (s *server) Ping(ctx context.Context, _ *pb.Empty) (*pb.Empty, error) {
	return call(s, func(d drivers.Driver) (*pb.Empty, error) { return empty, d.Ping(ctx) })
}

func (s *server) Metrics(ctx context.Context, _ *pb.Empty) (*pb.MetricsResult, error) {
	return call(s, func(d drivers.Driver) (*pb.MetricsResult, error) {
		ms, err := d.Metrics(ctx)
		return toMetrics(ms), err
	})
}

func (s *server) CreateQueue(ctx context.Context, req *pb.CreateQueueRequest) (*pb.CreateQueueResult, error) {
	return call(s, func(d drivers.Driver) (*pb.CreateQueueResult, error) {
		r, err := d.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: fromQueue(req.GetQueue())})
		return &pb.CreateQueueResult{Queue: toQueue(r.Queue), Existed: r.Existed}, err
	})
}

func (s *server) GetQueue(ctx context.Context, req *pb.GetQueueRequest) (*pb.Queue, error) {
	return call(s, func(d drivers.Driver) (*pb.Queue, error) {
		q, err := d.GetQueue(ctx, drivers.GetQueueRequest{Name: req.GetName()})
		return toQueue(q), err
	})
}

func (s *server) ListQueues(ctx context.Context, req *pb.ListQueuesRequest) (*pb.ListQueuesResult, error) {
	return call(s, func(d drivers.Driver) (*pb.ListQueuesResult, error) {
		r, err := d.ListQueues(ctx, drivers.ListQueuesRequest{Prefix: req.GetPrefix(), After: req.GetAfter(), Limit: int(req.GetLimit())})
		return &pb.ListQueuesResult{Queues: mapSlice(r.Queues, toQueue), More: r.More}, err
	})
}

func (s *server) SetQueueAttributes(ctx context.Context, req *pb.SetQueueAttributesRequest) (*pb.Empty, error) {
	return call(s, func(d drivers.Driver) (*pb.Empty, error) {
		return empty, d.SetQueueAttributes(ctx, drivers.SetQueueAttributesRequest{Name: req.GetName(),
			Attributes: fromAttributes(req.GetAttributes()), Now: fromTime(req.GetNow())})
	})
}

func (s *server) UpdateQueueTags(ctx context.Context, req *pb.UpdateQueueTagsRequest) (*pb.Empty, error) {
	return call(s, func(d drivers.Driver) (*pb.Empty, error) {
		return empty, d.UpdateQueueTags(ctx, drivers.UpdateQueueTagsRequest{Name: req.GetName(),
			Set: fromStringMap(req.GetSet()), Remove: emptyNil(req.GetRemove())})
	})
}

func (s *server) DeleteQueue(ctx context.Context, req *pb.DeleteQueueRequest) (*pb.Empty, error) {
	return call(s, func(d drivers.Driver) (*pb.Empty, error) {
		return empty, d.DeleteQueue(ctx, drivers.DeleteQueueRequest{Name: req.GetName(), Now: fromTime(req.GetNow())})
	})
}

func (s *server) PurgeQueue(ctx context.Context, req *pb.PurgeQueueRequest) (*pb.Empty, error) {
	return call(s, func(d drivers.Driver) (*pb.Empty, error) {
		return empty, d.PurgeQueue(ctx, drivers.PurgeQueueRequest{Name: req.GetName(), Now: fromTime(req.GetNow())})
	})
}

func (s *server) QueueStats(ctx context.Context, req *pb.QueueStatsRequest) (*pb.QueueStatsResult, error) {
	return call(s, func(d drivers.Driver) (*pb.QueueStatsResult, error) {
		st, err := d.QueueStats(ctx, drivers.QueueStatsRequest{Name: req.GetName(), Now: fromTime(req.GetNow()), Groups: req.GetGroups()})
		return &pb.QueueStatsResult{Visible: st.Visible, NotVisible: st.NotVisible, Delayed: st.Delayed,
			OldestSentAt: toTime(st.OldestSentAt), NoisyGroups: st.NoisyGroups, QuietGroups: st.QuietGroups}, err
	})
}

func (s *server) BrowseMessages(ctx context.Context, req *pb.BrowseMessagesRequest) (*pb.BrowseMessagesResult, error) {
	return call(s, func(d drivers.Driver) (*pb.BrowseMessagesResult, error) {
		r, err := d.BrowseMessages(ctx, drivers.BrowseMessagesRequest{Name: req.GetName(), Now: fromTime(req.GetNow()),
			After: req.GetAfter(), Limit: int(req.GetLimit())})
		return &pb.BrowseMessagesResult{Messages: mapSlice(r.Messages, toBrowsedMessage), NextAfter: r.NextAfter}, err
	})
}

func (s *server) SendMessages(ctx context.Context, req *pb.SendMessagesRequest) (*pb.SendMessagesResult, error) {
	return call(s, func(d drivers.Driver) (*pb.SendMessagesResult, error) {
		r, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: req.GetName(), Now: fromTime(req.GetNow()),
			Entries: mapSlice(req.GetEntries(), fromSendEntry)})
		return &pb.SendMessagesResult{Entries: mapSlice(r.Entries, toSendEntryResult)}, err
	})
}

func (s *server) ReceiveMessages(ctx context.Context, req *pb.ReceiveMessagesRequest) (*pb.ReceiveMessagesResult, error) {
	return call(s, func(d drivers.Driver) (*pb.ReceiveMessagesResult, error) {
		r, err := d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: req.GetName(), Now: fromTime(req.GetNow()),
			MaxMessages: int(req.GetMaxMessages()), VisibilityTimeout: req.GetVisibilityTimeout(),
			ReceiveRequestAttemptID: req.GetReceiveRequestAttemptId(), WaitTime: time.Duration(req.GetWaitTimeNs())})
		return &pb.ReceiveMessagesResult{Messages: mapSlice(r.Messages, toMessage), NextVisibleAt: toTime(r.NextVisibleAt),
			DeadLettered: r.DeadLettered}, err
	})
}

func (s *server) DeleteMessages(ctx context.Context, req *pb.DeleteMessagesRequest) (*pb.BatchResult, error) {
	return call(s, func(d drivers.Driver) (*pb.BatchResult, error) {
		r, err := d.DeleteMessages(ctx, drivers.DeleteMessagesRequest{Name: req.GetName(), Now: fromTime(req.GetNow()),
			Entries: mapSlice(req.GetEntries(), func(e *pb.DeleteEntry) drivers.DeleteEntry {
				return drivers.DeleteEntry{EntryID: e.GetEntryId(), ReceiptHandle: e.GetReceiptHandle()}
			})})
		return toBatchResult(r), err
	})
}

func (s *server) ChangeVisibility(ctx context.Context, req *pb.ChangeVisibilityRequest) (*pb.BatchResult, error) {
	return call(s, func(d drivers.Driver) (*pb.BatchResult, error) {
		r, err := d.ChangeVisibility(ctx, drivers.ChangeVisibilityRequest{Name: req.GetName(), Now: fromTime(req.GetNow()),
			Entries: mapSlice(req.GetEntries(), func(e *pb.ChangeVisibilityEntry) drivers.ChangeVisibilityEntry {
				return drivers.ChangeVisibilityEntry{EntryID: e.GetEntryId(), ReceiptHandle: e.GetReceiptHandle(),
					VisibilityTimeout: e.GetVisibilityTimeout()}
			})})
		return toBatchResult(r), err
	})
}

func (s *server) MoveMessages(ctx context.Context, req *pb.MoveMessagesRequest) (*pb.MoveMessagesResult, error) {
	return call(s, func(d drivers.Driver) (*pb.MoveMessagesResult, error) {
		r, err := d.MoveMessages(ctx, drivers.MoveMessagesRequest{Source: req.GetSource(), Destination: req.GetDestination(),
			Now: fromTime(req.GetNow()), Limit: int(req.GetLimit()), Task: fromMoveTaskStep(req.GetTask())})
		return &pb.MoveMessagesResult{Moved: int64(r.Moved), More: r.More}, err
	})
}

func (s *server) Sweep(ctx context.Context, req *pb.SweepRequest) (*pb.SweepResult, error) {
	return call(s, func(d drivers.Driver) (*pb.SweepResult, error) {
		r, err := d.Sweep(ctx, drivers.SweepRequest{Now: fromTime(req.GetNow()), Limit: int(req.GetLimit())})
		return &pb.SweepResult{Deleted: int64(r.Deleted), More: r.More}, err
	})
}

func (s *server) AwaitActivity(ctx context.Context, req *pb.AwaitActivityRequest) (*pb.AwaitActivityResult, error) {
	return call(s, func(d drivers.Driver) (*pb.AwaitActivityResult, error) {
		r, err := d.AwaitActivity(ctx, drivers.AwaitActivityRequest{Timeout: time.Duration(req.GetTimeoutNs())})
		return &pb.AwaitActivityResult{Queues: r.Queues}, err
	})
}

func (s *server) WatchActivity(ctx context.Context, req *pb.WatchActivityRequest) (*pb.Empty, error) {
	return call(s, func(d drivers.Driver) (*pb.Empty, error) {
		return empty, d.WatchActivity(ctx, drivers.WatchActivityRequest{Name: req.GetName(), Until: fromTime(req.GetUntil())})
	})
}

func (s *server) StartMoveTask(ctx context.Context, req *pb.MoveTask) (*pb.Empty, error) {
	return call(s, func(d drivers.Driver) (*pb.Empty, error) { return empty, d.StartMoveTask(ctx, fromMoveTask(req)) })
}

func (s *server) ReportMoveTask(ctx context.Context, req *pb.ReportMoveTaskRequest) (*pb.MoveTask, error) {
	return call(s, func(d drivers.Driver) (*pb.MoveTask, error) {
		t, err := d.ReportMoveTask(ctx, drivers.ReportMoveTaskRequest{Handle: req.GetHandle(), Owner: req.GetOwner(),
			Status: req.GetStatus(), Failure: req.GetFailure(), LeaseUntil: fromTime(req.GetLeaseUntil())})
		return toMoveTask(t), err
	})
}

func (s *server) CancelMoveTask(ctx context.Context, req *pb.CancelMoveTaskRequest) (*pb.MoveTask, error) {
	return call(s, func(d drivers.Driver) (*pb.MoveTask, error) {
		t, err := d.CancelMoveTask(ctx, req.GetHandle())
		return toMoveTask(t), err
	})
}

func (s *server) ListMoveTasks(ctx context.Context, req *pb.ListMoveTasksRequest) (*pb.MoveTasks, error) {
	return call(s, func(d drivers.Driver) (*pb.MoveTasks, error) {
		ts, err := d.ListMoveTasks(ctx, req.GetSource(), int(req.GetLimit()))
		return toMoveTasks(ts), err
	})
}

func (s *server) AdoptMoveTasks(ctx context.Context, req *pb.AdoptMoveTasksRequest) (*pb.MoveTasks, error) {
	return call(s, func(d drivers.Driver) (*pb.MoveTasks, error) {
		ts, err := d.AdoptMoveTasks(ctx, req.GetOwner(), fromTime(req.GetNow()), fromTime(req.GetLeaseUntil()))
		return toMoveTasks(ts), err
	})
}
