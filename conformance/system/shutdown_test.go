package system_test

import (
	"context"
	"strings"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/jackc/pgx/v5"
)

// TestGracefulShutdown sends SIGTERM to a gateway holding a long poll. The poll must
// answer at once, empty (not wait out its 20 s, by which time a delayed message would
// have become visible and been returned), the process must exit 0, and the delayed
// message must still be there for the next gateway.
func TestGracefulShutdown(t *testing.T) {
	db := newDatabase(t, serverDSN(t))
	a := startGateway(t, db)
	ca := newClient(a, 1)
	url := queueOn(t, "sys-shutdown", nil, ca)[0]
	ctx := context.Background()
	if _, err := ca.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("later"),
		DelaySeconds: 15}); err != nil {
		t.Fatal(err)
	}
	got := longPoll(ca, url)
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	watched(t, conn, "sys-shutdown") // the poll is waiting

	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	res := <-got
	if res.err != nil {
		t.Fatalf("long poll during shutdown: %v", res.err)
	}
	if n := len(res.out.Messages); n != 0 {
		t.Fatalf("long poll returned %d messages: it waited for the delayed one instead of ending at shutdown", n)
	}
	<-a.done
	if code := a.cmd.ProcessState.ExitCode(); code != 0 || !strings.Contains(a.logs.String(), "shutting down") {
		t.Fatalf("exit code %d; log:\n%s", code, a.logs.String())
	}

	b := startGateway(t, db)
	out, err := newClient(b, 1).GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessagesDelayed}})
	if err != nil {
		t.Fatal(err)
	}
	if n := out.Attributes["ApproximateNumberOfMessagesDelayed"]; n != "1" {
		t.Fatalf("delayed messages after the restart: %s, want 1", n)
	}
}
