package gateway

import (
	"context"
	"encoding/base64"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/gateway/sqserr"
	"github.com/anysqs/anysqs/internal/clock"
)

// Message move tasks (StartMessageMoveTask and friends) run inside the gateway: each task
// calls driver.MoveMessages once per second of gateway clock time, moving at most
// MaxNumberOfMessagesPerSecond messages per call. Task state lives in memory only: a
// restart forgets running and finished tasks (messages already moved stay moved), and
// each gateway instance sees only its own tasks.

const (
	moveStatusRunning   = "RUNNING"
	moveStatusCompleted = "COMPLETED"
	moveStatusCancelled = "CANCELLED"
	moveStatusFailed    = "FAILED"

	defaultMoveRate  = 500 // messages per second when the client names none; also the maximum
	maxMoveTasksList = 10
	moveTasksKept    = 10 // finished tasks remembered per source queue
)

type moveTask struct {
	handle, source, dest string
	rate                 *int32
	started              time.Time
	toMove               int64
	moved                int64
	status, failure      string
	timer                clock.Timer
}

type moveTasks struct {
	s        *Server
	mu       sync.Mutex
	closed   bool
	bySource map[string][]*moveTask // oldest first
	byHandle map[string]*moveTask
}

func newMoveTasks(s *Server) *moveTasks {
	return &moveTasks{s: s, bySource: map[string][]*moveTask{}, byHandle: map[string]*moveTask{}}
}

func (s *Server) startMessageMoveTask(ctx context.Context, c *call) (any, error) {
	var in startMoveTaskInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	if in.SourceArn == "" {
		return nil, sqserr.New(sqserr.MissingParameter, "The request must contain the parameter SourceArn.")
	}
	src, err := s.queueByARN(ctx, "SourceArn", in.SourceArn)
	if err != nil {
		return nil, err
	}
	if err := c.need(src.Name, capabilities.RedriveMoveTasks); err != nil {
		return nil, err
	}
	var dest string
	if in.DestinationArn != "" {
		d, err := s.queueByARN(ctx, "DestinationArn", in.DestinationArn)
		if err != nil {
			return nil, err
		}
		if d.Attributes.FifoQueue != src.Attributes.FifoQueue {
			return nil, sqserr.New(sqserr.InvalidParameterValue, "Destination queue %s must be of the same type (standard or FIFO) as source queue %s.", d.Name, src.Name)
		}
		dest = d.Name
	}
	if err := checkRange("MaxNumberOfMessagesPerSecond", in.MaxNumberOfMessagesPerSecond, 1, defaultMoveRate); err != nil {
		return nil, err
	}
	sources, _, err := s.deadLetterSources(ctx, src.Name, "", 1)
	if err != nil {
		return nil, err
	}
	if len(sources) == 0 {
		return nil, sqserr.New(sqserr.UnsupportedOperation, "Source queue %s is not configured as a dead-letter queue of any queue; message move tasks redrive from dead-letter queues only.", src.Name)
	}
	st, err := s.driver.QueueStats(ctx, drivers.QueueStatsRequest{Name: src.Name, Now: s.clock.Now()})
	if err != nil {
		return nil, driverError(err, src.Name)
	}
	t := &moveTask{
		handle: base64.RawURLEncoding.EncodeToString([]byte(uuid.NewString() + ":" + s.arn(src.Name))),
		source: src.Name, dest: dest, rate: in.MaxNumberOfMessagesPerSecond,
		started: s.clock.Now(), toMove: st.Visible, status: moveStatusRunning,
	}
	if err := s.moves.add(t); err != nil {
		return nil, err
	}
	return taskHandleOutput{TaskHandle: t.handle}, nil
}

// queueByARN resolves an ARN parameter to its queue; a missing queue is
// ResourceNotFoundException, as the move task actions report it.
func (s *Server) queueByARN(ctx context.Context, param, arn string) (drivers.Queue, error) {
	name, ok := s.parseARN(arn)
	if !ok {
		return drivers.Queue{}, sqserr.New(sqserr.InvalidParameterValue, "Value %s for parameter %s is invalid. Reason: not an SQS queue ARN of region %s and account %s.", arn, param, s.cfg.Region, s.cfg.AccountID)
	}
	q, err := s.driver.GetQueue(ctx, drivers.GetQueueRequest{Name: name})
	if drivers.KindOf(err) == drivers.KindNotFound {
		return q, sqserr.New(sqserr.ResourceNotFound, "The resource that you specified for the %s parameter does not exist: queue %s.", param, name)
	}
	if err != nil {
		return q, driverError(err, name)
	}
	return q, nil
}

func (m *moveTasks) add(t *moveTask) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return sqserr.New(sqserr.ServiceUnavailable, "the gateway is shutting down")
	}
	for _, o := range m.bySource[t.source] {
		if o.status == moveStatusRunning {
			return sqserr.New(sqserr.UnsupportedOperation, "A message move task is already running on queue %s; only one active task per queue is allowed.", t.source)
		}
	}
	list := append(m.bySource[t.source], t)
	if len(list) > moveTasksKept {
		for _, old := range list[:len(list)-moveTasksKept] {
			delete(m.byHandle, old.handle)
		}
		list = list[len(list)-moveTasksKept:]
	}
	m.bySource[t.source] = list
	m.byHandle[t.handle] = t
	t.timer = m.s.clock.AfterFunc(0, func() { m.step(t) })
	return nil
}

// step moves one second's worth of messages and schedules the next step.
func (m *moveTasks) step(t *moveTask) {
	m.mu.Lock()
	if m.closed || t.status != moveStatusRunning {
		m.mu.Unlock()
		return
	}
	m.s.bg.Add(1)
	m.mu.Unlock()
	defer m.s.bg.Done()

	limit := defaultMoveRate
	if t.rate != nil {
		limit = int(*t.rate)
	}
	res, err := m.s.driver.MoveMessages(m.s.ctx, drivers.MoveMessagesRequest{
		Source: t.source, Destination: t.dest, Now: m.s.clock.Now(), Limit: limit,
	})
	// Wake long polls only after the task's state is updated, so a consumer woken by a
	// move sees the task's progress.
	defer func() {
		if res.Moved > 0 && t.dest != "" {
			m.s.waiters.notify(t.dest)
		} else if res.Moved > 0 {
			m.s.waiters.notifyAll()
		}
	}()
	m.mu.Lock()
	defer m.mu.Unlock()
	t.moved += int64(res.Moved)
	switch {
	case t.status != moveStatusRunning:
	case err != nil:
		if m.s.ctx.Err() != nil {
			return
		}
		t.status, t.failure = moveStatusFailed, driverError(err, t.source).Message
	case !res.More:
		t.status = moveStatusCompleted
	case !m.closed:
		t.timer = m.s.clock.AfterFunc(time.Second, func() { m.step(t) })
	}
}

func (m *moveTasks) stopAll() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	for _, t := range m.byHandle {
		if t.timer != nil {
			t.timer.Stop()
		}
	}
}

func (s *Server) cancelMessageMoveTask(_ context.Context, c *call) (any, error) {
	var in cancelMoveTaskInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	if in.TaskHandle == "" {
		return nil, sqserr.New(sqserr.MissingParameter, "The request must contain the parameter TaskHandle.")
	}
	if err := c.need("", capabilities.RedriveMoveTasks); err != nil {
		return nil, err
	}
	m := s.moves
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.byHandle[in.TaskHandle]
	if t == nil || t.status != moveStatusRunning {
		return nil, sqserr.New(sqserr.ResourceNotFound, "No running message move task has the handle %s.", in.TaskHandle)
	}
	t.status = moveStatusCancelled
	if t.timer != nil {
		t.timer.Stop()
	}
	return cancelMoveTaskOutput{ApproximateNumberOfMessagesMoved: t.moved}, nil
}

func (s *Server) listMessageMoveTasks(ctx context.Context, c *call) (any, error) {
	var in listMoveTasksInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	if in.SourceArn == "" {
		return nil, sqserr.New(sqserr.MissingParameter, "The request must contain the parameter SourceArn.")
	}
	if err := checkRange("MaxResults", in.MaxResults, 1, maxMoveTasksList); err != nil {
		return nil, err
	}
	src, err := s.queueByARN(ctx, "SourceArn", in.SourceArn)
	if err != nil {
		return nil, err
	}
	if err := c.need(src.Name, capabilities.RedriveMoveTasks); err != nil {
		return nil, err
	}
	limit := 1
	if in.MaxResults != nil {
		limit = int(*in.MaxResults)
	}
	m := s.moves
	m.mu.Lock()
	defer m.mu.Unlock()
	out := listMoveTasksOutput{Results: []moveTaskEntry{}}
	list := m.bySource[src.Name]
	for i := len(list) - 1; i >= 0 && len(out.Results) < limit; i-- {
		t := list[i]
		e := moveTaskEntry{
			Status: t.status, SourceArn: s.arn(t.source), MaxNumberOfMessagesPerSecond: t.rate,
			ApproximateNumberOfMessagesMoved: t.moved, FailureReason: t.failure,
			StartedTimestamp: t.started.UnixMilli(),
		}
		if t.dest != "" {
			e.DestinationArn = s.arn(t.dest)
		}
		if t.status == moveStatusRunning {
			// Only a running task can be cancelled, so only it shows its handle.
			e.TaskHandle = t.handle
			toMove := t.toMove
			e.ApproximateNumberOfMessagesToMove = &toMove
		}
		out.Results = append(out.Results, e)
	}
	return out, nil
}
