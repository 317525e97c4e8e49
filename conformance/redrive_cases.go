package conformance

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/anysqs/anysqs/capabilities"
)

// Dead-letter queues, redrive policies and message move tasks.
func redriveCases() []tc {
	dlq := []capabilities.ID{capabilities.RedriveDLQ}
	move := []capabilities.ID{capabilities.RedriveMoveTasks}
	return []tc{
		{Caps: dlq, Name: "moved-after-max-receive-count", Run: func(h *H) {
			dl, src := h.withDLQ(2)
			sent := h.Send(src, "poison")
			for i := 1; i <= 2; i++ {
				m := h.ReceiveOne(src, 5)
				if h.ReceiveCount(m) != i {
					h.T.Fatalf("receive %d: ApproximateReceiveCount %d", i, h.ReceiveCount(m))
				}
				h.Advance(6 * time.Second)
			}
			h.ReceiveNone(src, "after maxReceiveCount receives")
			m := h.ReceiveOne(dl, 0)
			if aws.ToString(m.MessageId) != aws.ToString(sent.MessageId) || aws.ToString(m.Body) != "poison" {
				h.T.Fatalf("DLQ holds %s %q, want %s poison", aws.ToString(m.MessageId), aws.ToString(m.Body), aws.ToString(sent.MessageId))
			}
			if c := h.ReceiveCount(m); c < 3 {
				h.T.Fatalf("DLQ message ApproximateReceiveCount %d: the source's receives must be kept", c)
			}
			if dls, ok := m.Attributes["DeadLetterQueueSourceArn"]; ok && dls != h.Arn(src) {
				h.T.Fatalf("DeadLetterQueueSourceArn = %s, want %s", dls, h.Arn(src))
			}
		}},
		{Caps: dlq, Name: "own-dlq-keeps-messages", Run: func(h *H) {
			// SQS accepts a queue as its own dead-letter queue but does not document what
			// happens to its messages; anysqs keeps delivering them (sqsrule.RedriveTarget).
			h.AnysqsChoice("what SQS does with a queue that is its own dead-letter queue")
			q := h.Queue()
			pol := `{"deadLetterTargetArn":"` + h.Arn(q) + `","maxReceiveCount":1}`
			h.SetAttrs(q, "RedrivePolicy", pol)
			h.wantSameJSON(h.Attr(q, types.QueueAttributeNameRedrivePolicy), pol, "RedrivePolicy")
			h.Send(q, "a")
			h.Send(q, "b")
			for i := 1; i <= 3; i++ {
				for _, m := range h.receiveN(q, 2, 30) {
					if c := h.ReceiveCount(m); c != i {
						h.T.Fatalf("receive %d of %q: ApproximateReceiveCount %d, want %d", i, aws.ToString(m.Body), c, i)
					}
					h.release(q, m)
				}
			}
			if got := h.drain(q, 2); len(got) != 2 || got[0] != "a" || got[1] != "b" {
				h.T.Fatalf("queue holds %v after receives past maxReceiveCount, want [a b]", got)
			}
		}},
		{Caps: dlq, Name: "deleted-messages-not-moved", Run: func(h *H) {
			dl, src := h.withDLQ(1)
			h.Send(src, "fine")
			h.Delete(src, h.ReceiveOne(src, 5))
			h.Advance(6 * time.Second)
			h.ReceiveNone(src, "after delete")
			h.ReceiveNone(dl, "DLQ of a deleted message")
		}},
		{Caps: dlq, Name: "list-dead-letter-source-queues", Run: func(h *H) {
			dl, src := h.withDLQ(3)
			other := h.Queue()
			out, err := h.SQS.ListDeadLetterSourceQueues(h.Ctx, &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: aws.String(dl)})
			h.Must(err, "ListDeadLetterSourceQueues")
			if len(out.QueueUrls) != 1 || out.QueueUrls[0] != src {
				h.T.Fatalf("ListDeadLetterSourceQueues = %v, want [%s] (not %s)", out.QueueUrls, src, other)
			}
		}},
		{Caps: []capabilities.ID{capabilities.RedriveDLQ, capabilities.QueueFIFO}, Name: "fifo-dlq-must-be-fifo", Run: func(h *H) {
			std := h.Queue()
			_, err := h.SQS.CreateQueue(h.Ctx, &sqs.CreateQueueInput{QueueName: aws.String(h.FifoName("src")), Attributes: map[string]string{
				"FifoQueue": "true", "RedrivePolicy": redrivePolicy(h.Arn(std), 2)}})
			h.WantErr(err, "FIFO queue with a standard DLQ", "InvalidParameterValue", "InvalidAttributeValue")
		}},
		{Caps: []capabilities.ID{capabilities.RedriveDLQ, capabilities.FIFOOrdering}, Name: "fifo-dlq-after-max-receive-count", Run: func(h *H) {
			dl := h.FifoQueue("ContentBasedDeduplication", "true")
			src := h.FifoQueue("ContentBasedDeduplication", "true", "RedrivePolicy", redrivePolicy(h.Arn(dl), 1))
			h.SendFifo(src, "g", "", "first")
			h.SendFifo(src, "g", "", "second")
			h.ReceiveOne(src, 5)
			h.Advance(6 * time.Second)
			m := h.ReceiveOne(src, 5)
			if aws.ToString(m.Body) != "second" {
				h.T.Fatalf("after first moved to the DLQ, received %q, want second", aws.ToString(m.Body))
			}
			if got := aws.ToString(h.ReceiveOne(dl, 0).Body); got != "first" {
				h.T.Fatalf("FIFO DLQ holds %q, want first", got)
			}
		}},
		{Caps: []capabilities.ID{capabilities.RedriveAllow}, Name: "deny-all-rejects-source", Run: func(h *H) {
			dl := h.Queue("RedriveAllowPolicy", `{"redrivePermission":"denyAll"}`)
			_, err := h.SQS.CreateQueue(h.Ctx, &sqs.CreateQueueInput{QueueName: aws.String(h.Name("src")),
				Attributes: map[string]string{"RedrivePolicy": redrivePolicy(h.Arn(dl), 2)}})
			h.WantErr(err, "source of a denyAll DLQ", "InvalidParameterValue", "InvalidAttributeValue")
		}},
		{Caps: []capabilities.ID{capabilities.RedriveAllow}, Name: "by-queue-admits-listed-source", Run: func(h *H) {
			srcName := h.Name("src")
			srcArn := "arn:aws:sqs:" + h.Region + ":" + h.Account + ":" + srcName
			dl := h.Queue("RedriveAllowPolicy", `{"redrivePermission":"byQueue","sourceQueueArns":["`+srcArn+`"]}`)
			h.CreateQueue(srcName, map[string]string{"RedrivePolicy": redrivePolicy(h.Arn(dl), 2)})
			_, err := h.SQS.CreateQueue(h.Ctx, &sqs.CreateQueueInput{QueueName: aws.String(h.Name("other")),
				Attributes: map[string]string{"RedrivePolicy": redrivePolicy(h.Arn(dl), 2)}})
			h.WantErr(err, "unlisted source of a byQueue DLQ", "InvalidParameterValue", "InvalidAttributeValue")
		}},
		{Caps: move, Name: "redrive-back-to-source", Run: func(h *H) {
			dl, src := h.withDLQ(1)
			for i := 0; i < 3; i++ {
				h.Send(src, bodyN(i))
			}
			h.deadLetterAll(src, 3)
			out, err := h.SQS.StartMessageMoveTask(h.Ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(h.Arn(dl))})
			h.Must(err, "StartMessageMoveTask")
			if aws.ToString(out.TaskHandle) == "" {
				h.T.Fatalf("no TaskHandle")
			}
			// SQS's handle is padded standard base64 of {"taskId":...,"sourceArn":...}.
			var decoded struct{ TaskId, SourceArn string }
			raw, err := base64.StdEncoding.DecodeString(aws.ToString(out.TaskHandle))
			if err != nil || json.Unmarshal(raw, &decoded) != nil || decoded.TaskId == "" || decoded.SourceArn != h.Arn(dl) {
				h.T.Fatalf("TaskHandle %s decodes to %q (%v), want base64 of {\"taskId\":...,\"sourceArn\":%q}",
					aws.ToString(out.TaskHandle), raw, err, h.Arn(dl))
			}
			task := h.awaitMoveTask(dl, "COMPLETED")
			if task.ApproximateNumberOfMessagesMoved != 3 {
				h.T.Fatalf("task moved %d, want 3", task.ApproximateNumberOfMessagesMoved)
			}
			h.ReceiveNone(dl, "DLQ after redrive")
			ms := h.receiveN(src, 3, 30)
			for _, m := range ms {
				if h.ReceiveCount(m) != 1 {
					h.T.Fatalf("redriven message has receive count %d, want a fresh 1", h.ReceiveCount(m))
				}
			}
		}},
		{Caps: move, Name: "move-to-explicit-destination", Run: func(h *H) {
			dl, src := h.withDLQ(1)
			dest := h.Queue()
			h.Send(src, "m")
			h.deadLetterAll(src, 1)
			_, err := h.SQS.StartMessageMoveTask(h.Ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(h.Arn(dl)), DestinationArn: aws.String(h.Arn(dest))})
			h.Must(err, "StartMessageMoveTask to a destination")
			h.awaitMoveTask(dl, "COMPLETED")
			if got := aws.ToString(h.ReceiveOne(dest, 0).Body); got != "m" {
				h.T.Fatalf("destination holds %q, want m", got)
			}
			h.ReceiveNone(src, "source when a destination was given")
		}},
		{Caps: move, Name: "list-and-cancel", Run: func(h *H) {
			dl, _, out := h.slowMoveTask(h.SQS)
			// The task is paced on the gateway clock, which does not move until we advance it.
			lt, err := h.SQS.ListMessageMoveTasks(h.Ctx, &sqs.ListMessageMoveTasksInput{SourceArn: aws.String(h.Arn(dl))})
			h.Must(err, "ListMessageMoveTasks")
			if len(lt.Results) != 1 || aws.ToString(lt.Results[0].Status) != "RUNNING" || aws.ToString(lt.Results[0].TaskHandle) != aws.ToString(out.TaskHandle) {
				h.T.Fatalf("ListMessageMoveTasks = %+v, want one RUNNING task %s", lt.Results, aws.ToString(out.TaskHandle))
			}
			_, err = h.SQS.StartMessageMoveTask(h.Ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(h.Arn(dl))})
			h.WantErr(err, "second task on the same source", "InvalidParameterValue", "UnsupportedOperation")
			cout, err := h.SQS.CancelMessageMoveTask(h.Ctx, &sqs.CancelMessageMoveTaskInput{TaskHandle: out.TaskHandle})
			h.Must(err, "CancelMessageMoveTask")
			h.Advance(30 * time.Second)
			task := h.awaitMoveTask(dl, "CANCELLED")
			// A step already running when the cancel arrived may still finish: at 1
			// message/s that is one message more than the cancel reported, no more.
			if task.ApproximateNumberOfMessagesMoved > cout.ApproximateNumberOfMessagesMoved+1 || task.ApproximateNumberOfMessagesMoved >= 5 {
				h.T.Fatalf("after cancel moved %d (cancel said %d); the task kept going", task.ApproximateNumberOfMessagesMoved, cout.ApproximateNumberOfMessagesMoved)
			}
			_, err = h.SQS.CancelMessageMoveTask(h.Ctx, &sqs.CancelMessageMoveTaskInput{TaskHandle: out.TaskHandle})
			h.WantErr(err, "cancelling a cancelled task", "ResourceNotFoundException", "InvalidParameterValue")
		}},
		{Caps: move, Name: "task-survives-gateway-restart", Restarts: true, Run: func(h *H) {
			dl, src, out := h.slowMoveTask(h.SQS)
			h.Restart()
			lt, err := h.SQS.ListMessageMoveTasks(h.Ctx, &sqs.ListMessageMoveTasksInput{SourceArn: aws.String(h.Arn(dl))})
			h.Must(err, "ListMessageMoveTasks after a restart")
			if !h.Desc.MoveTaskStore {
				h.forgottenMoveTask(dl, src, lt.Results)
				return
			}
			if len(lt.Results) != 1 || aws.ToString(lt.Results[0].TaskHandle) != aws.ToString(out.TaskHandle) {
				h.T.Fatalf("after a restart ListMessageMoveTasks = %+v, want the running task %s", lt.Results, aws.ToString(out.TaskHandle))
			}
			// The restarted gateway takes the task up again and finishes it.
			task := h.awaitMoveTask(dl, "COMPLETED")
			if task.ApproximateNumberOfMessagesMoved != 5 {
				h.T.Fatalf("moved %d of 5", task.ApproximateNumberOfMessagesMoved)
			}
			if got := h.receiveN(src, 5, 30); len(got) != 5 {
				h.T.Fatalf("%d of 5 messages back in the source queue", len(got))
			}
		}},
		{Caps: move, Name: "source-must-be-a-dlq", Run: func(h *H) {
			q := h.Queue()
			_, err := h.SQS.StartMessageMoveTask(h.Ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(h.Arn(q))})
			h.WantErr(err, "StartMessageMoveTask from a queue that is no DLQ", "InvalidParameterValue", "UnsupportedOperation")
			_, err = h.SQS.StartMessageMoveTask(h.Ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(h.Arn(q) + "-missing")})
			h.WantErr(err, "StartMessageMoveTask from a missing queue", "ResourceNotFoundException", "QueueDoesNotExist", "InvalidParameterValue")
		}},
	}
}

// withDLQ creates a DLQ and a source queue redriving to it after maxReceive receives.
func (h *H) withDLQ(maxReceive int) (dlq, src string) {
	h.T.Helper()
	dlq = h.Queue()
	src = h.Queue("RedrivePolicy", redrivePolicy(h.Arn(dlq), maxReceive))
	return dlq, src
}

func redrivePolicy(dlqArn string, maxReceive int) string {
	return fmt.Sprintf(`{"deadLetterTargetArn":"%s","maxReceiveCount":"%d"}`, dlqArn, maxReceive)
}

// deadLetterAll receives n messages once (maxReceiveCount 1) and lets them expire, so
// the next receive moves them to the DLQ.
func (h *H) deadLetterAll(src string, n int) {
	h.T.Helper()
	h.receiveN(src, n, 5)
	h.Advance(6 * time.Second)
	h.ReceiveNone(src, "source after maxReceiveCount")
}

// slowMoveTask dead-letters 5 messages of a new source queue and starts, through c, a
// task moving them back at 1 message/s, which the gateway clock paces: it runs until the
// test advances the clock.
func (h *H) slowMoveTask(c *sqs.Client) (dlq, src string, out *sqs.StartMessageMoveTaskOutput) {
	h.T.Helper()
	dlq, src = h.withDLQ(1)
	for i := 0; i < 5; i++ {
		h.Send(src, bodyN(i))
	}
	h.deadLetterAll(src, 5)
	out, err := c.StartMessageMoveTask(h.Ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(h.Arn(dlq)), MaxNumberOfMessagesPerSecond: aws.Int32(1)})
	h.Must(err, "StartMessageMoveTask at 1 message/s")
	return dlq, src, out
}

// awaitMoveTask waits, advancing the gateway clock (tasks are paced on it), until the
// newest move task of dlq has status.
func (h *H) awaitMoveTask(dlq, status string) types.ListMessageMoveTasksResultEntry {
	h.T.Helper()
	var last types.ListMessageMoveTasksResultEntry
	h.Eventually("move task "+status, time.Second, func() bool {
		out, err := h.SQS.ListMessageMoveTasks(h.Ctx, &sqs.ListMessageMoveTasksInput{SourceArn: aws.String(h.Arn(dlq))})
		h.Must(err, "ListMessageMoveTasks")
		if len(out.Results) == 0 {
			h.T.Fatalf("ListMessageMoveTasks: no task")
		}
		last = out.Results[0]
		if s := aws.ToString(last.Status); s == "FAILED" && status != "FAILED" {
			h.T.Fatalf("move task failed: %s", aws.ToString(last.FailureReason))
		}
		return aws.ToString(last.Status) == status
	})
	return last
}

// forgottenMoveTask asserts what a restart leaves of a move task kept in the gateway's
// memory (a driver without Description.MoveTaskStore): the task is gone, and each of
// the five messages is still in the dead-letter queue or back in the source, at least once.
func (h *H) forgottenMoveTask(dl, src string, listed []types.ListMessageMoveTasksResultEntry) {
	h.T.Helper()
	if len(listed) != 0 {
		h.T.Fatalf("after a restart ListMessageMoveTasks = %+v; tasks kept in the gateway's memory end with it", listed)
	}
	// A step cut short by the restart may hold a message in flight in the dead-letter
	// queue until its timeout: wait for every message to show up somewhere.
	ids := map[string]bool{}
	h.Eventually("all 5 messages back in the dead-letter queue or the source", 10*time.Second, func() bool {
		for _, q := range []string{src, dl} {
			for _, m := range h.Receive(q, 10, 60) {
				ids[aws.ToString(m.MessageId)] = true
			}
		}
		return len(ids) >= 5
	})
	if len(ids) != 5 {
		h.T.Fatalf("after a restart %d of the 5 messages are in the dead-letter queue or the source", len(ids))
	}
}
