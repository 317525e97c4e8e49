package plugin

import (
	"context"
	"time"

	"github.com/anysqs/anysqs/drivers"
	pb "github.com/anysqs/anysqs/drivers/plugin/internal/driverpb"
)

var _ drivers.Driver = (*Host)(nil)

// Describe returns the description the plugin gave when it was started: the gateway's
// policy is built from it, and a restarted plugin must give the same one.
func (h *Host) Describe(context.Context) (drivers.Description, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cur != nil {
		return h.cur.desc, nil
	}
	return h.desc, nil
}

// Ping fails KindUnavailable while the plugin is down or restarting, so the gateway's
// readiness reports it; otherwise it is the plugin driver's own Ping.
func (h *Host) Ping(ctx context.Context) error {
	_, err := invoke(h, ctx, func(rpc pb.DriverClient) (*pb.Empty, error) { return rpc.Ping(ctx, empty) })
	return err
}

// Metrics returns the plugin driver's series and the host's own: whether the plugin is
// up and how often it was restarted. While the plugin is down only the host's.
func (h *Host) Metrics(ctx context.Context) ([]drivers.Metric, error) {
	up := 0.0
	var ms []drivers.Metric
	if r, err := invoke(h, ctx, func(rpc pb.DriverClient) (*pb.MetricsResult, error) { return rpc.Metrics(ctx, empty) }); err == nil {
		up, ms = 1, fromMetrics(r)
	} else if ctx.Err() != nil {
		return nil, err
	}
	return append(ms,
		drivers.Metric{Name: "anysqs_plugin_up", Help: "Whether the driver plugin process is running and answering.", Type: drivers.Gauge, Value: up},
		drivers.Metric{Name: "anysqs_plugin_restarts_total", Help: "Driver plugin processes started after the first, after a crash or hang.",
			Type: drivers.Counter, Value: float64(h.restarts.Load())},
	), nil
}

func (h *Host) CreateQueue(ctx context.Context, req drivers.CreateQueueRequest) (drivers.CreateQueueResult, error) {
	r, err := invoke(h, ctx, func(rpc pb.DriverClient) (*pb.CreateQueueResult, error) {
		return rpc.CreateQueue(ctx, &pb.CreateQueueRequest{Queue: toQueue(req.Queue)})
	})
	if err != nil {
		return drivers.CreateQueueResult{}, err
	}
	return drivers.CreateQueueResult{Queue: fromQueue(r.GetQueue()), Existed: r.GetExisted()}, nil
}

func (h *Host) GetQueue(ctx context.Context, req drivers.GetQueueRequest) (drivers.Queue, error) {
	r, err := invoke(h, ctx, func(rpc pb.DriverClient) (*pb.Queue, error) {
		return rpc.GetQueue(ctx, &pb.GetQueueRequest{Name: req.Name})
	})
	if err != nil {
		return drivers.Queue{}, err
	}
	return fromQueue(r), nil
}

func (h *Host) ListQueues(ctx context.Context, req drivers.ListQueuesRequest) (drivers.ListQueuesResult, error) {
	r, err := invoke(h, ctx, func(rpc pb.DriverClient) (*pb.ListQueuesResult, error) {
		return rpc.ListQueues(ctx, &pb.ListQueuesRequest{Prefix: req.Prefix, After: req.After, Limit: int64(req.Limit)})
	})
	if err != nil {
		return drivers.ListQueuesResult{}, err
	}
	return drivers.ListQueuesResult{Queues: mapSlice(r.GetQueues(), fromQueue), More: r.GetMore()}, nil
}

func (h *Host) SetQueueAttributes(ctx context.Context, req drivers.SetQueueAttributesRequest) error {
	_, err := invoke(h, ctx, func(rpc pb.DriverClient) (*pb.Empty, error) {
		return rpc.SetQueueAttributes(ctx, &pb.SetQueueAttributesRequest{Name: req.Name,
			Attributes: toAttributes(req.Attributes), Now: toTime(req.Now)})
	})
	return err
}

func (h *Host) UpdateQueueTags(ctx context.Context, req drivers.UpdateQueueTagsRequest) error {
	_, err := invoke(h, ctx, func(rpc pb.DriverClient) (*pb.Empty, error) {
		return rpc.UpdateQueueTags(ctx, &pb.UpdateQueueTagsRequest{Name: req.Name, Set: toStringMap(req.Set), Remove: req.Remove})
	})
	return err
}

func (h *Host) DeleteQueue(ctx context.Context, req drivers.DeleteQueueRequest) error {
	_, err := invoke(h, ctx, func(rpc pb.DriverClient) (*pb.Empty, error) {
		return rpc.DeleteQueue(ctx, &pb.DeleteQueueRequest{Name: req.Name, Now: toTime(req.Now)})
	})
	return err
}

func (h *Host) PurgeQueue(ctx context.Context, req drivers.PurgeQueueRequest) error {
	_, err := invoke(h, ctx, func(rpc pb.DriverClient) (*pb.Empty, error) {
		return rpc.PurgeQueue(ctx, &pb.PurgeQueueRequest{Name: req.Name, Now: toTime(req.Now)})
	})
	return err
}

func (h *Host) QueueStats(ctx context.Context, req drivers.QueueStatsRequest) (drivers.QueueStats, error) {
	r, err := invoke(h, ctx, func(rpc pb.DriverClient) (*pb.QueueStatsResult, error) {
		return rpc.QueueStats(ctx, &pb.QueueStatsRequest{Name: req.Name, Now: toTime(req.Now), Groups: req.Groups})
	})
	if err != nil {
		return drivers.QueueStats{}, err
	}
	return drivers.QueueStats{Visible: r.GetVisible(), NotVisible: r.GetNotVisible(), Delayed: r.GetDelayed(),
		OldestSentAt: fromTime(r.GetOldestSentAt()), NoisyGroups: r.GetNoisyGroups(), QuietGroups: r.GetQuietGroups()}, nil
}

func (h *Host) BrowseMessages(ctx context.Context, req drivers.BrowseMessagesRequest) (drivers.BrowseMessagesResult, error) {
	r, err := invoke(h, ctx, func(rpc pb.DriverClient) (*pb.BrowseMessagesResult, error) {
		return rpc.BrowseMessages(ctx, &pb.BrowseMessagesRequest{Name: req.Name, Now: toTime(req.Now),
			After: req.After, Limit: int64(req.Limit)})
	})
	if err != nil {
		return drivers.BrowseMessagesResult{}, err
	}
	return drivers.BrowseMessagesResult{Messages: mapSlice(r.GetMessages(), fromBrowsedMessage), NextAfter: r.GetNextAfter()}, nil
}

func (h *Host) SendMessages(ctx context.Context, req drivers.SendMessagesRequest) (drivers.SendMessagesResult, error) {
	r, err := invoke(h, ctx, func(rpc pb.DriverClient) (*pb.SendMessagesResult, error) {
		return rpc.SendMessages(ctx, &pb.SendMessagesRequest{Name: req.Name, Now: toTime(req.Now),
			Entries: mapSlice(req.Entries, toSendEntry)})
	})
	if err != nil {
		return drivers.SendMessagesResult{}, err
	}
	return drivers.SendMessagesResult{Entries: mapSlice(r.GetEntries(), fromSendEntryResult)}, nil
}

func (h *Host) ReceiveMessages(ctx context.Context, req drivers.ReceiveMessagesRequest) (drivers.ReceiveMessagesResult, error) {
	r, err := invoke(h, ctx, func(rpc pb.DriverClient) (*pb.ReceiveMessagesResult, error) {
		return rpc.ReceiveMessages(ctx, &pb.ReceiveMessagesRequest{Name: req.Name, Now: toTime(req.Now),
			MaxMessages: int64(req.MaxMessages), VisibilityTimeout: req.VisibilityTimeout,
			ReceiveRequestAttemptId: req.ReceiveRequestAttemptID, WaitTimeNs: int64(req.WaitTime)})
	})
	if err != nil {
		return drivers.ReceiveMessagesResult{}, err
	}
	return drivers.ReceiveMessagesResult{Messages: mapSlice(r.GetMessages(), fromMessage),
		NextVisibleAt: fromTime(r.GetNextVisibleAt()), DeadLettered: r.GetDeadLettered()}, nil
}

func (h *Host) DeleteMessages(ctx context.Context, req drivers.DeleteMessagesRequest) (drivers.BatchResult, error) {
	r, err := invoke(h, ctx, func(rpc pb.DriverClient) (*pb.BatchResult, error) {
		return rpc.DeleteMessages(ctx, &pb.DeleteMessagesRequest{Name: req.Name, Now: toTime(req.Now),
			Entries: mapSlice(req.Entries, func(e drivers.DeleteEntry) *pb.DeleteEntry {
				return &pb.DeleteEntry{EntryId: e.EntryID, ReceiptHandle: e.ReceiptHandle}
			})})
	})
	if err != nil {
		return drivers.BatchResult{}, err
	}
	return fromBatchResult(r), nil
}

func (h *Host) ChangeVisibility(ctx context.Context, req drivers.ChangeVisibilityRequest) (drivers.BatchResult, error) {
	r, err := invoke(h, ctx, func(rpc pb.DriverClient) (*pb.BatchResult, error) {
		return rpc.ChangeVisibility(ctx, &pb.ChangeVisibilityRequest{Name: req.Name, Now: toTime(req.Now),
			Entries: mapSlice(req.Entries, func(e drivers.ChangeVisibilityEntry) *pb.ChangeVisibilityEntry {
				return &pb.ChangeVisibilityEntry{EntryId: e.EntryID, ReceiptHandle: e.ReceiptHandle, VisibilityTimeout: e.VisibilityTimeout}
			})})
	})
	if err != nil {
		return drivers.BatchResult{}, err
	}
	return fromBatchResult(r), nil
}

func (h *Host) MoveMessages(ctx context.Context, req drivers.MoveMessagesRequest) (drivers.MoveMessagesResult, error) {
	r, err := invoke(h, ctx, func(rpc pb.DriverClient) (*pb.MoveMessagesResult, error) {
		return rpc.MoveMessages(ctx, &pb.MoveMessagesRequest{Source: req.Source, Destination: req.Destination,
			Now: toTime(req.Now), Limit: int64(req.Limit), Task: toMoveTaskStep(req.Task)})
	})
	if err != nil {
		return drivers.MoveMessagesResult{}, err
	}
	return drivers.MoveMessagesResult{Moved: int(r.GetMoved()), More: r.GetMore()}, nil
}

func (h *Host) Sweep(ctx context.Context, req drivers.SweepRequest) (drivers.SweepResult, error) {
	r, err := invoke(h, ctx, func(rpc pb.DriverClient) (*pb.SweepResult, error) {
		return rpc.Sweep(ctx, &pb.SweepRequest{Now: toTime(req.Now), Limit: int64(req.Limit)})
	})
	if err != nil {
		return drivers.SweepResult{}, err
	}
	return drivers.SweepResult{Deleted: int(r.GetDeleted()), More: r.GetMore()}, nil
}

func (h *Host) AwaitActivity(ctx context.Context, req drivers.AwaitActivityRequest) (drivers.AwaitActivityResult, error) {
	r, err := invoke(h, ctx, func(rpc pb.DriverClient) (*pb.AwaitActivityResult, error) {
		return rpc.AwaitActivity(ctx, &pb.AwaitActivityRequest{TimeoutNs: int64(req.Timeout)})
	})
	if err != nil {
		return drivers.AwaitActivityResult{}, err
	}
	return drivers.AwaitActivityResult{Queues: emptyNil(r.GetQueues())}, nil
}

func (h *Host) WatchActivity(ctx context.Context, req drivers.WatchActivityRequest) error {
	_, err := invoke(h, ctx, func(rpc pb.DriverClient) (*pb.Empty, error) {
		return rpc.WatchActivity(ctx, &pb.WatchActivityRequest{Name: req.Name, Until: toTime(req.Until)})
	})
	return err
}

func (h *Host) StartMoveTask(ctx context.Context, t drivers.MoveTask) error {
	_, err := invoke(h, ctx, func(rpc pb.DriverClient) (*pb.Empty, error) { return rpc.StartMoveTask(ctx, toMoveTask(t)) })
	return err
}

func (h *Host) ReportMoveTask(ctx context.Context, req drivers.ReportMoveTaskRequest) (drivers.MoveTask, error) {
	r, err := invoke(h, ctx, func(rpc pb.DriverClient) (*pb.MoveTask, error) {
		return rpc.ReportMoveTask(ctx, &pb.ReportMoveTaskRequest{Handle: req.Handle, Owner: req.Owner,
			Status: req.Status, Failure: req.Failure, LeaseUntil: toTime(req.LeaseUntil)})
	})
	if err != nil {
		return drivers.MoveTask{}, err
	}
	return fromMoveTask(r), nil
}

func (h *Host) CancelMoveTask(ctx context.Context, handle string) (drivers.MoveTask, error) {
	r, err := invoke(h, ctx, func(rpc pb.DriverClient) (*pb.MoveTask, error) {
		return rpc.CancelMoveTask(ctx, &pb.CancelMoveTaskRequest{Handle: handle})
	})
	if err != nil {
		return drivers.MoveTask{}, err
	}
	return fromMoveTask(r), nil
}

func (h *Host) ListMoveTasks(ctx context.Context, source string, limit int) ([]drivers.MoveTask, error) {
	r, err := invoke(h, ctx, func(rpc pb.DriverClient) (*pb.MoveTasks, error) {
		return rpc.ListMoveTasks(ctx, &pb.ListMoveTasksRequest{Source: source, Limit: int64(limit)})
	})
	if err != nil {
		return nil, err
	}
	return fromMoveTasks(r), nil
}

func (h *Host) AdoptMoveTasks(ctx context.Context, owner string, now, leaseUntil time.Time) ([]drivers.MoveTask, error) {
	r, err := invoke(h, ctx, func(rpc pb.DriverClient) (*pb.MoveTasks, error) {
		return rpc.AdoptMoveTasks(ctx, &pb.AdoptMoveTasksRequest{Owner: owner, Now: toTime(now), LeaseUntil: toTime(leaseUntil)})
	})
	if err != nil {
		return nil, err
	}
	return fromMoveTasks(r), nil
}
