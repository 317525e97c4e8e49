package drivers

import (
	"context"
	"time"
)

// A driver without an ability embeds the type below that answers its methods with
// KindUnsupported, as a gRPC server embeds its Unimplemented server, instead of writing
// the stubs itself; its Describe says the same, and the gateway reads only that.

// NoActivity answers AwaitActivity and WatchActivity with KindUnsupported. Embed it in a
// driver whose Description.Activity is ActivityLocal or ActivityPoll: the gateway then
// never calls either method.
type NoActivity struct {
	// Name is the driver's name, and Why says why it has no notification (for example
	// "the gateway polls"); both go into the error.
	Name, Why string
}

// AwaitActivity returns KindUnsupported.
func (n NoActivity) AwaitActivity(context.Context, AwaitActivityRequest) (AwaitActivityResult, error) {
	return AwaitActivityResult{}, n.unsupported("AwaitActivity")
}

// WatchActivity returns KindUnsupported.
func (n NoActivity) WatchActivity(context.Context, WatchActivityRequest) error {
	return n.unsupported("WatchActivity")
}

func (n NoActivity) unsupported(method string) error {
	return Errorf(KindUnsupported, "%s: %s: %s", n.Name, method, n.Why)
}

// NoMoveTaskStore answers the MoveTaskStore methods with KindUnsupported. Embed it in a
// driver whose Description.MoveTaskStore is false: the gateway then keeps move tasks in
// its own memory and never calls them.
type NoMoveTaskStore struct {
	// Name is the driver's name, for the error.
	Name string
}

// StartMoveTask returns KindUnsupported.
func (n NoMoveTaskStore) StartMoveTask(context.Context, MoveTask) error {
	return n.unsupported("StartMoveTask")
}

// ReportMoveTask returns KindUnsupported.
func (n NoMoveTaskStore) ReportMoveTask(context.Context, ReportMoveTaskRequest) (MoveTask, error) {
	return MoveTask{}, n.unsupported("ReportMoveTask")
}

// CancelMoveTask returns KindUnsupported.
func (n NoMoveTaskStore) CancelMoveTask(context.Context, string) (MoveTask, error) {
	return MoveTask{}, n.unsupported("CancelMoveTask")
}

// ListMoveTasks returns KindUnsupported.
func (n NoMoveTaskStore) ListMoveTasks(context.Context, string, int) ([]MoveTask, error) {
	return nil, n.unsupported("ListMoveTasks")
}

// AdoptMoveTasks returns KindUnsupported.
func (n NoMoveTaskStore) AdoptMoveTasks(context.Context, string, time.Time, time.Time) ([]MoveTask, error) {
	return nil, n.unsupported("AdoptMoveTasks")
}

func (n NoMoveTaskStore) unsupported(method string) error {
	return Errorf(KindUnsupported, "%s: %s: move tasks are kept by the gateway", n.Name, method)
}

var _ MoveTaskStore = NoMoveTaskStore{}
