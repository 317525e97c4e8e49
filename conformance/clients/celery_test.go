package clients_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/anysqs/anysqs/internal/testenv"
)

// celeryPython returns the Python interpreter that has Celery, kombu's SQS transport and
// pycurl ($ANYSQS_TEST_CELERY_PYTHON, Debian's /usr/bin/python3 with python3-celery,
// python3-kombu, python3-pycurl and python3-boto3, as scripts/test-env.sh installs and
// checks them), or skips (fails under CI) without it.
func celeryPython(t *testing.T) string {
	t.Helper()
	py := os.Getenv("ANYSQS_TEST_CELERY_PYTHON")
	if py == "" {
		testenv.Unavailable(t, "Celery on kombu's SQS transport: ANYSQS_TEST_CELERY_PYTHON is not set "+
			"(eval \"$(scripts/test-env.sh)\" installs Debian's python3-celery, python3-kombu, python3-pycurl)")
	}
	return py
}

// celeryQueuePrefix starts the names of the queues Celery creates.
const celeryQueuePrefix = "celery-"

// celeryTaskCount is how many add tasks the producer sends.
const celeryTaskCount = 20

// celeryRecord is what one task execution reported on the results queue.
type celeryRecord struct {
	Task    string `json:"task"`
	ID      string `json:"id"`
	Args    []int  `json:"args"`
	Result  *int   `json:"result"`
	Attempt int    `json:"attempt"`
	Outcome string `json:"outcome"`
}

func (r celeryRecord) String() string {
	s := fmt.Sprintf("%s %s", r.Task, r.ID)
	if r.Args != nil {
		s += fmt.Sprintf(" args %v", r.Args)
	}
	if r.Result != nil {
		s += fmt.Sprintf(" result %d", *r.Result)
	}
	if r.Outcome != "" {
		s += fmt.Sprintf(" attempt %d %s", r.Attempt, r.Outcome)
	}
	return s
}

// celeryTasks: a producer sends 20 add tasks, a flaky task that retries twice through
// the broker and a task that always raises, all through kombu's SQS transport; then a
// worker runs them. Each execution reports on a results queue, which the test reads: each
// add ran once with the right sum, flaky ran at attempts 0, 1 and 2 under one task ID,
// the failing task ran once; and once the worker has stopped, the task queue is empty.
func celeryTasks(t *testing.T, endpoint string, c *sqs.Client, python string) {
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	results, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("celery-results")})
	if err != nil {
		t.Fatal(err)
	}
	dir, err := filepath.Abs("celery")
	if err != nil {
		t.Fatal(err)
	}
	env := clientEnv(t, "ANYSQS_ENDPOINT="+endpoint, "ANYSQS_QUEUE_PREFIX="+celeryQueuePrefix,
		"ANYSQS_RESULTS_URL="+aws.ToString(results.QueueUrl), "PYTHONDONTWRITEBYTECODE=1")

	producer := exec.Command(python, "anysqs_tasks.py", "send", strconv.Itoa(celeryTaskCount))
	producer.Dir, producer.Env = dir, env
	sent := start(t, "celery producer", producer).events()
	if len(sent) != celeryTaskCount+2 {
		t.Fatalf("the producer sent %d tasks, want %d", len(sent), celeryTaskCount+2)
	}

	// The thread pool, since a warm shutdown of the solo pool interrupts the task under
	// way (Celery raises WorkerShutdown in its only thread), and the message of a task
	// that ran is then put back instead of deleted.
	worker := exec.Command(python, "-m", "celery", "-A", "anysqs_tasks", "worker", "-Q", "tasks",
		"--pool=threads", "--concurrency=4", "--without-gossip", "--without-mingle", "--without-heartbeat", "--loglevel=INFO")
	worker.Dir, worker.Env = dir, env
	w := start(t, "celery worker", worker)
	// add once each, flaky at attempts 0, 1 and 2, boom once.
	records := receiveRecords(t, ctx, c, aws.ToString(results.QueueUrl), celeryTaskCount+3+1, w)
	w.stop() // a warm shutdown: the task under way finishes and is acknowledged

	byID := map[string][]celeryRecord{}
	for _, r := range records {
		byID[r.ID] = append(byID[r.ID], r)
	}
	for _, s := range sent {
		id, task := s.str("id"), s.str("task")
		got := byID[id]
		switch task {
		case "add":
			var args []int
			if err := json.Unmarshal([]byte(s.str("args")), &args); err != nil || len(args) != 2 {
				t.Fatalf("producer printed add args %s", s.str("args"))
			}
			if len(got) != 1 || !slices.Equal(got[0].Args, args) || got[0].Result == nil || *got[0].Result != args[0]+args[1] {
				t.Errorf("add%v (task %s) reported %v, want one run with result %d", args, id, got, args[0]+args[1])
			}
		case "flaky":
			slices.SortFunc(got, func(a, b celeryRecord) int { return a.Attempt - b.Attempt }) // a standard queue's order is loose
			var attempts []string
			for _, r := range got {
				attempts = append(attempts, strconv.Itoa(r.Attempt)+":"+r.Outcome)
			}
			if want := []string{"0:retry", "1:retry", "2:ok"}; !slices.Equal(attempts, want) {
				t.Errorf("flaky (task %s) ran as %v, want %v", id, attempts, want)
			}
		case "boom":
			if len(got) != 1 || got[0].Outcome != "raised" {
				t.Errorf("boom (task %s) reported %v, want one run that raised", id, got)
			}
		default:
			t.Fatalf("the producer printed an unknown task %q", task)
		}
		delete(byID, id)
	}
	if len(byID) != 0 {
		t.Errorf("tasks the producer did not send ran: %v", byID)
	}
	// Nothing more ran (every record was deleted as read), and the worker deleted every
	// task message once its task had run, the failed one included.
	wantEmpty(t, c, aws.ToString(results.QueueUrl))
	tasks, err := c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(celeryQueuePrefix + "tasks")})
	if err != nil {
		t.Fatalf("the queue kombu created: %v", err)
	}
	wantEmpty(t, c, aws.ToString(tasks.QueueUrl))
}

// receiveRecords receives and deletes records from the results queue until it has n;
// it fails the test if the worker exits first.
func receiveRecords(t *testing.T, ctx context.Context, c *sqs.Client, queueURL string, n int, worker *process) []celeryRecord {
	t.Helper()
	var records []celeryRecord
	for len(records) < n {
		if worker.exited() {
			t.Fatalf("the celery worker exited (%v) after %d of %d task runs:\n%s", worker.err, len(records), n, worker.stderr)
		}
		out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(queueURL),
			MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if err != nil {
			t.Fatalf("receive from the results queue after %d of %d task runs: %v", len(records), n, err)
		}
		var del []types.DeleteMessageBatchRequestEntry
		for i, m := range out.Messages {
			var r celeryRecord
			if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &r); err != nil {
				t.Fatalf("results queue message %q: %v", aws.ToString(m.Body), err)
			}
			records = append(records, r)
			del = append(del, types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle})
		}
		if len(del) > 0 {
			d, err := c.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(queueURL), Entries: del})
			if err != nil || len(d.Failed) > 0 {
				t.Fatalf("delete records: %v %+v", err, d)
			}
		}
	}
	return records
}
