package gateway_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/postgres"
	"github.com/anysqs/anysqs/gateway"
	"github.com/anysqs/anysqs/internal/clock"
	"github.com/anysqs/anysqs/internal/testenv"
)

// newPair starts two gateway instances over one sqlite driver and one fake clock, as two
// gateway processes over one shared backend would be.
func newPair(t *testing.T) (a, b *env) {
	t.Helper()
	return newPairOn(t, memDriver(t))
}

func newPairOn(t *testing.T, d drivers.Driver) (a, b *env) {
	t.Helper()
	clk := clock.NewFake(start)
	mk := func() *env {
		gw, err := gateway.New(context.Background(), gateway.Config{Driver: d, Clock: clk, PublicURL: "http://sqs.test"})
		if err != nil {
			t.Fatal(err)
		}
		e := &env{t: t, gw: gw, clock: clk, waits: make(chan string, 100)}
		e.http = httptest.NewServer(gw)
		t.Cleanup(func() {
			e.http.Close()
			_ = gw.Close()
		})
		return e
	}
	return mk(), mk()
}

// newPostgresPair is newPair over the PostgreSQL driver, in a schema of its own that is
// dropped afterwards (testenv.PostgresSchema).
func newPostgresPair(t *testing.T) (a, b *env) {
	t.Helper()
	dsn := testenv.Postgres(t)
	schema := testenv.PostgresSchema(t, dsn, "anysqs_gwqc_")
	d, err := postgres.Open(context.Background(), postgres.Options{DSN: dsn, Schema: schema, MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return newPairOn(t, d)
}

func (e *env) wantError(code, action, body string) {
	e.t.Helper()
	st, _, b := e.jsonCall(action, body)
	if st != 400 || !strings.Contains(b, code) {
		e.t.Fatalf("%s: %d %s, want 400 %s", action, st, b, code)
	}
}

// TestQueueCacheDeletedThroughOtherInstance: B has the queue cached when A deletes it;
// B's sends and receives within the TTL must still fail with QueueDoesNotExist, which
// the drivers guarantee by rejecting operations on a missing queue themselves.
func TestQueueCacheDeletedThroughOtherInstance(t *testing.T) {
	for _, name := range []string{"gone", "gone.fifo"} {
		fifo := strings.HasSuffix(name, ".fifo")
		url := "http://sqs.test/000000000000/" + name
		create := fmt.Sprintf(`{"QueueName":%q}`, name)
		send := fmt.Sprintf(`{"QueueUrl":%q,"MessageBody":"m"}`, url)
		batch := fmt.Sprintf(`{"QueueUrl":%q,"Entries":[{"Id":"1","MessageBody":"b"}]}`, url)
		if fifo {
			create = fmt.Sprintf(`{"QueueName":%q,"Attributes":{"FifoQueue":"true","ContentBasedDeduplication":"true"}}`, name)
			send = fmt.Sprintf(`{"QueueUrl":%q,"MessageBody":"m","MessageGroupId":"g"}`, url)
			batch = fmt.Sprintf(`{"QueueUrl":%q,"Entries":[{"Id":"1","MessageBody":"b","MessageGroupId":"g"}]}`, url)
		}
		ops := []struct{ label, action, body string }{
			{"send", "SendMessage", send},
			{"send-batch", "SendMessageBatch", batch},
			{"receive", "ReceiveMessage", fmt.Sprintf(`{"QueueUrl":%q}`, url)},
			{"long-poll", "ReceiveMessage", fmt.Sprintf(`{"QueueUrl":%q,"WaitTimeSeconds":5}`, url)},
		}
		for _, op := range ops {
			for backend, pair := range map[string]func(*testing.T) (*env, *env){"sqlite": newPair, "postgres": newPostgresPair} {
				t.Run(backend+"/"+name+"/"+op.label, func(t *testing.T) {
					a, b := pair(t)
					a.mustJSON("CreateQueue", create)
					b.mustJSON("SendMessage", send) // fills B's cache
					a.mustJSON("DeleteQueue", fmt.Sprintf(`{"QueueUrl":%q}`, url))
					// The clock has not moved: B's entry is within its TTL.
					b.wantError("QueueDoesNotExist", op.action, op.body)
					// And again, now that B has dropped its entry and asks the backend.
					b.wantError("QueueDoesNotExist", op.action, op.body)
				})
			}
		}
	}
}

// TestQueueCacheAttributeChangeThroughOtherInstance: a SetQueueAttributes through A is
// seen by A at once and by B once B's entry has expired on the clock.
func TestQueueCacheAttributeChangeThroughOtherInstance(t *testing.T) {
	a, b := newPair(t)
	const url = "http://sqs.test/000000000000/attrs"
	a.mustJSON("CreateQueue", `{"QueueName":"attrs"}`)
	big := fmt.Sprintf(`{"QueueUrl":%q,"MessageBody":%q}`, url, strings.Repeat("x", 2000))
	a.mustJSON("SendMessage", big) // both instances now hold the queue
	b.mustJSON("SendMessage", big)

	a.mustJSON("SetQueueAttributes", fmt.Sprintf(`{"QueueUrl":%q,"Attributes":{"MaximumMessageSize":"1024"}}`, url))
	a.wantError("InvalidParameterValue", "SendMessage", big) // the changing instance: at once

	// B may serve its entry until the TTL (1s by default) has passed.
	b.mustJSON("SendMessage", big)
	a.clock.Advance(999 * time.Millisecond)
	b.mustJSON("SendMessage", big)
	a.clock.Advance(time.Millisecond)
	b.wantError("InvalidParameterValue", "SendMessage", big)
}

// TestQueueCacheLocalChangesAtOnce: every metadata change through an instance is seen
// by that instance's next message operation without the clock moving.
func TestQueueCacheLocalChangesAtOnce(t *testing.T) {
	e := newEnv(t)
	const url = "http://sqs.test/000000000000/local"
	big := fmt.Sprintf(`{"QueueUrl":%q,"MessageBody":%q}`, url, strings.Repeat("x", 2000))
	e.mustJSON("CreateQueue", `{"QueueName":"local","Attributes":{"MaximumMessageSize":"1024"}}`)
	e.wantError("InvalidParameterValue", "SendMessage", big)
	e.mustJSON("SetQueueAttributes", fmt.Sprintf(`{"QueueUrl":%q,"Attributes":{"MaximumMessageSize":"4096"}}`, url))
	e.mustJSON("SendMessage", big)
	e.mustJSON("DeleteQueue", fmt.Sprintf(`{"QueueUrl":%q}`, url))
	e.wantError("QueueDoesNotExist", "SendMessage", big)
	e.wantError("QueueDoesNotExist", "ReceiveMessage", fmt.Sprintf(`{"QueueUrl":%q}`, url))
}

// TestQueueCacheDisabled: a negative TTL turns the cache off, so B sees A's change at
// once.
func TestQueueCacheDisabled(t *testing.T) {
	ctx := context.Background()
	d := memDriver(t)
	clk := clock.NewFake(start)
	var envs []*env
	for range 2 {
		gw, err := gateway.New(ctx, gateway.Config{Driver: d, Clock: clk, PublicURL: "http://sqs.test", QueueCacheTTL: -1})
		if err != nil {
			t.Fatal(err)
		}
		e := &env{t: t, gw: gw, clock: clk, http: httptest.NewServer(gw)}
		t.Cleanup(func() { e.http.Close(); _ = gw.Close() })
		envs = append(envs, e)
	}
	a, b := envs[0], envs[1]
	const url = "http://sqs.test/000000000000/nocache"
	big := fmt.Sprintf(`{"QueueUrl":%q,"MessageBody":%q}`, url, strings.Repeat("x", 2000))
	a.mustJSON("CreateQueue", `{"QueueName":"nocache"}`)
	b.mustJSON("SendMessage", big)
	a.mustJSON("SetQueueAttributes", fmt.Sprintf(`{"QueueUrl":%q,"Attributes":{"MaximumMessageSize":"1024"}}`, url))
	b.wantError("InvalidParameterValue", "SendMessage", big)
}
