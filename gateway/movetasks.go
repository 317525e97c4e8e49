package gateway

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/gateway/sqserr"
	"github.com/anysqs/anysqs/internal/clock"
)

// Message move tasks (StartMessageMoveTask and friends): how they run and where they are
// kept is in the package documentation, "Message move tasks". Each step records itself
// in a task store: the driver (its MoveTaskStore methods) when its Description sets
// MoveTaskStore, otherwise memMoveTasks.

const (
	defaultMoveRate  = 500 // messages per second when the client names none; also the maximum
	maxMoveTasksList = 10

	// moveLease is how long a step keeps a task with its runner; moveAdoptEvery is how
	// often an instance looks for tasks whose runner stopped renewing theirs.
	moveLease      = 30 * time.Second
	moveAdoptEvery = 10 * time.Second
	// moveStopGrace is how long Close lets a step under way finish (real time): a move
	// the backend has committed is then reported too, rather than cut off. A backend that
	// does not answer by then has its step cancelled, and the lease lapses.
	moveStopGrace = 10 * time.Second
)

// moveTasks runs this instance's share of the move tasks.
type moveTasks struct {
	s      *Server
	b      *backend // the backend whose queues' tasks these are
	store  drivers.MoveTaskStore
	shared bool          // store is the driver's, shared with other instances
	mem    *memMoveTasks // the store when it is not shared

	// stepCtx is the steps' context: Close does not cancel it with the server's, so a
	// step under way finishes; stopSteps cancels it once the steps had moveStopGrace.
	stepCtx   context.Context
	stopSteps context.CancelFunc
	grace     *time.Timer

	mu      sync.Mutex
	closed  bool
	running map[string]*runningMove // by handle: the tasks this instance runs
	adopt   clock.Timer
}

// runningMove is a task this instance runs. A step whose report failed leaves its
// outcome here for the next step to report. Counts are not kept here: a shared store
// counts each step's moves in the move's own transaction (drivers.MoveTaskStep), and
// the memory store as the step returns.
type runningMove struct {
	task  drivers.MoveTask
	timer clock.Timer
	// stepMu is held by a step from its report to its scheduling the next, so a cancel
	// through this instance can wait for a step under way and then report at once.
	stepMu  sync.Mutex
	outcome string // a final status not yet reported
	failure string
}

// report is what r's runner tells the store now: the outcome (RUNNING until one is
// known) and a lease until leaseUntil.
func (r *runningMove) report(owner string, leaseUntil time.Time) drivers.ReportMoveTaskRequest {
	status := r.outcome
	if status == "" {
		status = drivers.MoveTaskRunning
	}
	return drivers.ReportMoveTaskRequest{Handle: r.task.Handle, Owner: owner,
		Status: status, Failure: r.failure, LeaseUntil: leaseUntil}
}

// nextStepLocked schedules r's next step a second from now, unless the instance is
// closing; m.mu is held.
func (m *moveTasks) nextStepLocked(r *runningMove) {
	if !m.closed {
		r.timer = m.s.clock.AfterFunc(time.Second, func() { m.step(r) })
	}
}

func newMoveTasks(s *Server, b *backend) *moveTasks {
	m := &moveTasks{s: s, b: b, running: map[string]*runningMove{}}
	m.stepCtx, m.stopSteps = context.WithCancel(context.WithoutCancel(s.ctx))
	m.shared = b.desc.MoveTaskStore
	if !m.shared {
		m.mem = newMemMoveTasks()
		m.store = m.mem
	} else {
		m.store = b.driver
		// Under the lock: on a real clock the first look may run, and schedule the next,
		// before AfterFunc returns.
		m.mu.Lock()
		m.adopt = s.clock.AfterFunc(0, m.adoptLapsed)
		m.mu.Unlock()
	}
	return m
}

func (s *Server) startMessageMoveTask(ctx context.Context, c *call) (any, error) {
	var in startMoveTaskInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	if in.SourceArn == "" {
		return nil, sqserr.New(sqserr.MissingParameter, "The request must contain the parameter SourceArn.")
	}
	src, err := s.queueByARN(ctx, c, "SourceArn", in.SourceArn)
	if err != nil {
		return nil, err
	}
	if err := c.need(src.Name, capabilities.RedriveMoveTasks); err != nil {
		return nil, err
	}
	var dest string
	if in.DestinationArn != "" {
		d, err := s.queueByARN(ctx, c, "DestinationArn", in.DestinationArn)
		if err != nil {
			return nil, err
		}
		if owner, _ := s.splitStored(src.Name); !s.ownedBy(d.Name, owner) {
			return nil, sqserr.New(sqserr.InvalidParameterValue, "Destination queue %s must be in the account of source queue %s.", in.DestinationArn, in.SourceArn)
		}
		if err := s.sameBackend("Destination queue", src.Name, d.Name); err != nil {
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
	if err := s.on(src.Name).limits.checkMoveRate(in.MaxNumberOfMessagesPerSecond); err != nil {
		return nil, err
	}
	sources, _, err := s.deadLetterSources(ctx, src.Name, "", 1)
	if err != nil {
		return nil, err
	}
	if len(sources) == 0 {
		return nil, sqserr.New(sqserr.UnsupportedOperation, "Source queue %s is not configured as a dead-letter queue of any queue; message move tasks redrive from dead-letter queues only.", src.Name)
	}
	st, err := s.on(src.Name).driver.QueueStats(ctx, drivers.QueueStatsRequest{Name: src.Name, Now: s.clock.Now()})
	if err != nil {
		return nil, driverError(err, src.Name)
	}
	now := s.clock.Now()
	t := drivers.MoveTask{
		Handle: moveTaskHandle(uuid.NewString(), s.arn(src.Name)),
		Source: src.Name, Destination: dest, Rate: in.MaxNumberOfMessagesPerSecond,
		Started: now, ToMove: st.Visible, Status: drivers.MoveTaskRunning,
		Owner: s.instance, LeaseUntil: now.Add(moveLease),
	}
	if err := s.on(src.Name).moves.start(ctx, t); err != nil {
		return nil, err
	}
	return taskHandleOutput{TaskHandle: t.Handle}, nil
}

// queueByARN resolves an ARN parameter of c to its queue, which c must be allowed to use
// (authorize); a missing queue is ResourceNotFoundException, as the move task actions
// report it.
func (s *Server) queueByARN(ctx context.Context, c *call, param, arn string) (drivers.Queue, error) {
	name, ok := s.parseARN(arn)
	if !ok {
		return drivers.Queue{}, sqserr.New(sqserr.InvalidParameterValue, "Value %s for parameter %s is invalid. Reason: not an SQS queue ARN of region %s.", arn, param, s.cfg.Region)
	}
	if err := s.authorize(ctx, c, name); err != nil {
		return drivers.Queue{}, err
	}
	q, err := s.on(name).driver.GetQueue(ctx, drivers.GetQueueRequest{Name: name})
	if drivers.KindOf(err) == drivers.KindNotFound {
		return q, sqserr.New(sqserr.ResourceNotFound, "The resource that you specified for the %s parameter does not exist: queue %s.", param, name)
	}
	if err != nil {
		return q, driverError(err, name)
	}
	return q, nil
}

func (m *moveTasks) start(ctx context.Context, t drivers.MoveTask) error {
	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	if closed {
		return sqserr.New(sqserr.ServiceUnavailable, "the gateway is shutting down")
	}
	err := m.store.StartMoveTask(ctx, t)
	if drivers.KindOf(err) == drivers.KindFailedPrecondition {
		return sqserr.New(sqserr.UnsupportedOperation, "A message move task is already running on queue %s; only one active task per queue is allowed.", t.Source)
	}
	if err != nil {
		return driverError(err, t.Source)
	}
	m.run(t)
	return nil
}

// run makes this instance run t from now on.
func (m *moveTasks) run(t drivers.MoveTask) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed || m.running[t.Handle] != nil {
		return
	}
	r := &runningMove{task: t}
	m.running[t.Handle] = r
	r.timer = m.s.clock.AfterFunc(0, func() { m.step(r) })
}

// step reports r's last step and, while the task still runs here, moves one second's
// worth of messages and schedules the next step. Reporting first renews the lease and
// learns of a cancel through any instance before anything more moves.
func (m *moveTasks) step(r *runningMove) {
	r.stepMu.Lock()
	defer r.stepMu.Unlock()
	m.mu.Lock()
	if m.closed || m.running[r.task.Handle] != r {
		m.mu.Unlock()
		return
	}
	m.s.bg.Add(1)
	m.mu.Unlock()
	defer m.s.bg.Done()

	if !m.report(r) {
		return
	}
	t := r.task
	limit := m.b.limits.moveRate()
	if t.Rate != nil {
		limit = int(*t.Rate)
	}
	req := drivers.MoveMessagesRequest{Source: t.Source, Destination: t.Destination, Now: m.s.clock.Now(), Limit: limit}
	if m.shared {
		req.Task = &drivers.MoveTaskStep{Handle: t.Handle, Owner: m.s.instance, LeaseUntil: req.Now.Add(moveLease)}
	}
	res, err := m.b.driver.MoveMessages(m.stepCtx, req)
	if m.mem != nil {
		m.mem.addMoved(t.Handle, int64(res.Moved))
	}
	// Wake long polls as the step ends: after the final report when the task ended, so
	// a consumer woken by its last move finds it finished.
	defer func() {
		if res.Moved > 0 && t.Destination != "" {
			m.s.waiters.notify(t.Destination)
		} else if res.Moved > 0 {
			m.s.waiters.notifyAll()
		}
	}()
	switch k := drivers.KindOf(err); {
	case err != nil && m.stepCtx.Err() != nil:
		return // stopped by Close after its grace: the lease lapses and another instance adopts the task
	case k == drivers.KindFailedPrecondition && m.shared:
		// The task was cancelled or adopted since the report above, and nothing moved: the
		// report tells which, and ends the task here (a cancel by making it CANCELLED).
		if !m.report(r) {
			return
		}
	case k == drivers.KindUnavailable || k == drivers.KindThrottled || k == drivers.KindAborted ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		// The backend is down, busy or contended, or a call timed out: try again next
		// second rather than fail the task. What a failed call committed is counted.
		m.s.log.Warn("move task: moving messages failed; retrying", "queue", t.Source, "err", err)
	case err != nil:
		r.outcome, r.failure = drivers.MoveTaskFailed, driverError(err, t.Source).Message
		m.s.log.Error("move task failed", "queue", t.Source, "err", err)
	case !res.More:
		r.outcome = drivers.MoveTaskCompleted
	}
	if r.outcome != "" {
		m.report(r) // the task ended: say so now
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.running[t.Handle] == r {
		m.nextStepLocked(r)
	}
}

// report tells the store r's moves not yet counted and its outcome, and renews its
// lease. It returns whether r still runs here: not when the task ended, was cancelled,
// adopted by another instance or forgotten (r leaves running then), nor when the store
// is unreachable (the next step reports again, and moves nothing before it has).
func (m *moveTasks) report(r *runningMove) bool {
	got, err := m.store.ReportMoveTask(m.stepCtx, r.report(m.s.instance, m.s.clock.Now().Add(moveLease)))
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.running[r.task.Handle] != r {
		return false
	}
	switch {
	case err != nil && drivers.KindOf(err) != drivers.KindNotFound:
		// Unless the lease lapses and another instance adopts the task, which the next
		// report then shows, it stays ours.
		if m.stepCtx.Err() == nil {
			m.s.log.Warn("move task: recording progress failed; retrying", "queue", r.task.Source, "err", err)
		}
		m.nextStepLocked(r)
		return false
	case err != nil, got.Status != drivers.MoveTaskRunning, got.Owner != m.s.instance:
		delete(m.running, r.task.Handle)
		return false
	}
	return true
}

// adoptLapsed takes over running tasks whose runner stopped renewing their lease (it
// stopped or lost its database), and schedules the next look.
func (m *moveTasks) adoptLapsed() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.s.bg.Add(1)
	m.mu.Unlock()
	defer m.s.bg.Done()

	now := m.s.clock.Now()
	tasks, err := m.store.AdoptMoveTasks(m.s.ctx, m.s.instance, now, now.Add(moveLease))
	if err != nil && m.s.ctx.Err() == nil {
		m.s.log.Warn("move task: looking for tasks to adopt failed", "err", err)
	}
	for _, t := range tasks {
		m.s.log.Info("move task: adopted a task whose gateway stopped", "queue", t.Source)
		m.run(t)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.closed {
		m.adopt = m.s.clock.AfterFunc(moveAdoptEvery, m.adoptLapsed)
	}
}

// stopAll stops this instance's tasks: no step starts from now on, and the steps in
// progress have moveStopGrace to finish. Once they have ended (the caller waits for
// them), release hands their leases on to other instances.
func (m *moveTasks) stopAll() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	if m.adopt != nil {
		m.adopt.Stop()
	}
	for _, r := range m.running {
		r.timer.Stop()
	}
	m.grace = time.AfterFunc(moveStopGrace, m.stopSteps)
}

// release ends the leases of the tasks this instance ran, so that another instance
// adopts them at its next look rather than when the leases lapse. Best effort: a lease
// not released lapses anyway.
func (m *moveTasks) release() {
	if m.grace != nil {
		m.grace.Stop()
	}
	m.stopSteps()
	if !m.shared {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	m.mu.Lock()
	running := m.running
	m.running = map[string]*runningMove{}
	m.mu.Unlock()
	for _, r := range running {
		_, _ = m.store.ReportMoveTask(ctx, r.report(m.s.instance, m.s.clock.Now()))
	}
}

func (s *Server) cancelMessageMoveTask(ctx context.Context, c *call) (any, error) {
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
	if err := s.authorizeTask(ctx, c, in.TaskHandle); err != nil {
		return nil, err
	}
	m := s.on(s.taskSource(in.TaskHandle)).moves
	t, err := m.store.CancelMoveTask(ctx, in.TaskHandle)
	if drivers.KindOf(err) == drivers.KindNotFound {
		return nil, sqserr.New(sqserr.ResourceNotFound, "No running message move task has the handle %s.", in.TaskHandle)
	}
	if err != nil {
		return nil, driverError(err, "")
	}
	// The task is CANCELLING until its runner reports. When that is this instance,
	// report now (after the step under way, if any, which moves nothing more once it
	// has), so that it lists as CANCELLED at once; a runner elsewhere reports at its next
	// step, before it moves anything more.
	m.mu.Lock()
	r := m.running[t.Handle]
	if r != nil {
		r.timer.Stop()
	}
	m.mu.Unlock()
	if r != nil {
		m.step(r)
	}
	return cancelMoveTaskOutput{ApproximateNumberOfMessagesMoved: t.Moved}, nil
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
	src, err := s.queueByARN(ctx, c, "SourceArn", in.SourceArn)
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
	tasks, err := s.on(src.Name).moves.store.ListMoveTasks(ctx, src.Name, limit)
	if err != nil {
		return nil, driverError(err, src.Name)
	}
	out := listMoveTasksOutput{Results: []moveTaskEntry{}}
	for _, t := range tasks {
		e := moveTaskEntry{
			Status: t.Status, SourceArn: s.arn(t.Source), MaxNumberOfMessagesPerSecond: t.Rate,
			ApproximateNumberOfMessagesMoved: t.Moved, FailureReason: t.Failure,
			StartedTimestamp: t.Started.UnixMilli(),
		}
		if t.Destination != "" {
			e.DestinationArn = s.arn(t.Destination)
		}
		if t.Status == drivers.MoveTaskRunning {
			// Only a running task can be cancelled, so only it shows its handle.
			e.TaskHandle = t.Handle
			toMove := t.ToMove
			e.ApproximateNumberOfMessagesToMove = &toMove
		}
		out.Results = append(out.Results, e)
	}
	return out, nil
}

// authorizeTask checks that c may act on the source queue a task handle names. A handle
// that does not decode names no task this gateway made; the store reports it unknown.
func (s *Server) authorizeTask(ctx context.Context, c *call, handle string) error {
	if src, ok := s.parseARN(taskSourceARN(handle)); ok {
		return s.authorize(ctx, c, src)
	}
	return nil
}

// taskSource is the stored name of the source queue a task handle names, or "" when it
// names none (the store then reports the handle unknown).
func (s *Server) taskSource(handle string) string {
	src, _ := s.parseARN(taskSourceARN(handle))
	return src
}

// taskSourceARN is the source ARN a task handle encodes, or "".
func taskSourceARN(handle string) string {
	b, err := base64.StdEncoding.DecodeString(handle)
	if err != nil {
		return ""
	}
	var h struct {
		SourceArn string `json:"sourceArn"`
	}
	if json.Unmarshal(b, &h) != nil {
		return ""
	}
	return h.SourceArn
}

// moveTaskHandle encodes a task handle as SQS does, so tools that decode one find what
// they expect: padded standard base64 of {"taskId": ..., "sourceArn": ...}.
func moveTaskHandle(taskID, sourceArn string) string {
	b, _ := json.Marshal(struct {
		TaskID    string `json:"taskId"`
		SourceArn string `json:"sourceArn"`
	}{taskID, sourceArn})
	return base64.StdEncoding.EncodeToString(b)
}
