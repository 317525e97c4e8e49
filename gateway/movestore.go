package gateway

import (
	"context"
	"sync"
	"time"

	"github.com/anysqs/anysqs/drivers"
)

// memMoveTasks keeps message move tasks in the gateway's memory, for drivers whose
// Description does not set MoveTaskStore (every driver has the drivers.MoveTaskStore
// methods; those drivers return KindUnsupported from them). It keeps that interface's
// contract within one gateway instance.
type memMoveTasks struct {
	mu       sync.Mutex
	bySource map[string][]*drivers.MoveTask // oldest first
	byHandle map[string]*drivers.MoveTask
}

func newMemMoveTasks() *memMoveTasks {
	return &memMoveTasks{bySource: map[string][]*drivers.MoveTask{}, byHandle: map[string]*drivers.MoveTask{}}
}

func (m *memMoveTasks) StartMoveTask(_ context.Context, t drivers.MoveTask) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, o := range m.bySource[t.Source] {
		if o.Status == drivers.MoveTaskRunning || o.Status == drivers.MoveTaskCancelling {
			return drivers.Errorf(drivers.KindFailedPrecondition, "a task is running on %s", t.Source)
		}
	}
	// No other task is active, so every one but the new one is finished.
	list := append(m.bySource[t.Source], &t)
	if len(list) > drivers.MoveTasksKept+1 {
		for _, old := range list[:len(list)-drivers.MoveTasksKept-1] {
			delete(m.byHandle, old.Handle)
		}
		list = list[len(list)-drivers.MoveTasksKept-1:]
	}
	m.bySource[t.Source] = list
	m.byHandle[t.Handle] = &t
	return nil
}

func (m *memMoveTasks) ReportMoveTask(_ context.Context, req drivers.ReportMoveTaskRequest) (drivers.MoveTask, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.byHandle[req.Handle]
	if t == nil {
		return drivers.MoveTask{}, drivers.Errorf(drivers.KindNotFound, "no move task %s", req.Handle)
	}
	if t.Owner != req.Owner {
		return *t, nil
	}
	switch t.Status {
	case drivers.MoveTaskRunning:
		t.Status, t.Failure, t.LeaseUntil = req.Status, req.Failure, req.LeaseUntil
	case drivers.MoveTaskCancelling:
		t.Status = drivers.MoveTaskCancelled
	}
	return *t, nil
}

// addMoved counts n more messages moved by a task's step.
func (m *memMoveTasks) addMoved(handle string, n int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t := m.byHandle[handle]; t != nil {
		t.Moved += n
	}
}

func (m *memMoveTasks) CancelMoveTask(_ context.Context, handle string) (drivers.MoveTask, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.byHandle[handle]
	if t == nil || t.Status != drivers.MoveTaskRunning {
		return drivers.MoveTask{}, drivers.Errorf(drivers.KindNotFound, "no running move task %s", handle)
	}
	t.Status = drivers.MoveTaskCancelling
	return *t, nil
}

func (m *memMoveTasks) ListMoveTasks(_ context.Context, source string, limit int) ([]drivers.MoveTask, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	list := m.bySource[source]
	var out []drivers.MoveTask
	for i := len(list) - 1; i >= 0 && len(out) < limit; i-- {
		out = append(out, *list[i])
	}
	return out, nil
}

// AdoptMoveTasks finds nothing to adopt: no other instance shares this memory.
func (m *memMoveTasks) AdoptMoveTasks(context.Context, string, time.Time, time.Time) ([]drivers.MoveTask, error) {
	return nil, nil
}
