package gateway

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
	"github.com/anysqs/anysqs/gateway/message"
	"github.com/anysqs/anysqs/gateway/sqserr"
	"github.com/anysqs/anysqs/gateway/wire"
)

func fromWire(in map[string]messageAttributeValue) map[string]drivers.MessageAttribute {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]drivers.MessageAttribute, len(in))
	for k, v := range in {
		a := drivers.MessageAttribute{DataType: v.DataType, BinaryValue: v.BinaryValue}
		if v.StringValue != nil {
			a.StringValue = *v.StringValue
		}
		out[k] = a
	}
	return out
}

func toWire(a drivers.MessageAttribute) messageAttributeValue {
	v := messageAttributeValue{DataType: a.DataType}
	if strings.HasPrefix(a.DataType, "Binary") {
		v.BinaryValue = a.BinaryValue
		if v.BinaryValue == nil {
			v.BinaryValue = []byte{}
		}
	} else {
		sv := a.StringValue
		v.StringValue = &sv
	}
	return v
}

func checkRange(param string, v *int32, lo, hi int32) error {
	if v != nil && (*v < lo || *v > hi) {
		return sqserr.New(sqserr.InvalidParameterValue, "Value %d for parameter %s is invalid. Reason: Must be between %d and %d, if provided.", *v, param, lo, hi)
	}
	return nil
}

// SQS's words for a FIFO message without a group id, or without a deduplication id on a
// queue without content-based deduplication.
const (
	msgNeedsGroupID = "The request must contain the parameter MessageGroupId."
	msgNeedsDedupID = "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly"
)

// checkFIFOBatch fails a whole FIFO SendMessageBatch, as SQS does, when an entry lacks a
// group id or (without content-based deduplication) a deduplication id.
func checkFIFOBatch(q drivers.Queue, entries []sendBatchEntry) error {
	if !q.Attributes.FifoQueue {
		return nil
	}
	for _, e := range entries {
		if e.MessageGroupId == nil {
			return sqserr.New(sqserr.InvalidParameterValue, msgNeedsGroupID)
		}
		if e.MessageDeduplicationId == "" && !q.Attributes.ContentBasedDeduplication {
			return sqserr.New(sqserr.InvalidParameterValue, msgNeedsDedupID)
		}
	}
	return nil
}

// prepareSend validates one message for queue q and resolves its defaults: the queue's
// delay, the content-based deduplication id, a fresh message id. It returns the entry and
// the size counted against the queue's MaximumMessageSize.
func (s *Server) prepareSend(c *call, q drivers.Queue, entryID string, f sendFields) (drivers.SendEntry, int, error) {
	var e drivers.SendEntry
	if f.MessageBody == nil {
		return e, 0, sqserr.New(sqserr.MissingParameter, "The request must contain the parameter MessageBody.")
	}
	body := *f.MessageBody
	if err := message.ValidateBody(body); err != nil {
		return e, 0, err
	}
	attrs := fromWire(f.MessageAttributes)
	if err := message.ValidateAttributes(attrs); err != nil {
		return e, 0, err
	}
	sys := fromWire(f.MessageSystemAttributes)
	if err := message.ValidateSystemAttributes(sys); err != nil {
		return e, 0, err
	}
	if _, ok := sys[message.AWSTraceHeader]; !ok && c.traceHeader != "" {
		th := map[string]drivers.MessageAttribute{message.AWSTraceHeader: {DataType: "String", StringValue: c.traceHeader}}
		if message.ValidateSystemAttributes(th) == nil {
			if sys == nil {
				sys = th
			} else {
				sys[message.AWSTraceHeader] = th[message.AWSTraceHeader]
			}
		}
	}
	size := message.Size(body, attrs)
	if err := message.CheckSize(size, q.Attributes.MaximumMessageSize); err != nil {
		return e, 0, err
	}
	if err := checkRange("DelaySeconds", f.DelaySeconds, 0, sqsrule.MaxDelaySeconds); err != nil {
		return e, 0, err
	}
	delay := q.Attributes.DelaySeconds
	if f.DelaySeconds != nil && !q.Attributes.FifoQueue {
		// FIFO queues take no per-message delay (a 0 is allowed and ignored): the
		// queue's delay applies to every message.
		delay = *f.DelaySeconds
	}
	group := ""
	if f.MessageGroupId != nil {
		group = *f.MessageGroupId
		if err := message.ValidateGroupID(group); err != nil {
			return e, 0, err
		}
	}
	dedup := f.MessageDeduplicationId
	if q.Attributes.FifoQueue {
		if f.DelaySeconds != nil && *f.DelaySeconds != 0 {
			// A per-message delay would let a later message of the group overtake this one.
			return e, 0, sqserr.New(sqserr.InvalidParameterValue, "Value %d for parameter DelaySeconds is invalid. Reason: The request include parameter that is not valid for this queue type (FIFO queue %s).", *f.DelaySeconds, q.Name)
		}
		if f.MessageGroupId == nil {
			return e, 0, sqserr.New(sqserr.MissingParameter, msgNeedsGroupID)
		}
		if dedup == "" {
			if !q.Attributes.ContentBasedDeduplication {
				return e, 0, sqserr.New(sqserr.InvalidParameterValue, msgNeedsDedupID)
			}
			dedup = message.ContentDedupID(body)
		} else if err := message.ValidateDedupID(dedup); err != nil {
			return e, 0, err
		}
	} else if dedup != "" {
		return e, 0, sqserr.New(sqserr.InvalidParameterValue, "The request include parameter MessageDeduplicationId that is not valid for this queue type (standard queue %s).", q.Name)
	}
	if err := needForSend(c, q, f, attrs); err != nil {
		return e, 0, err
	}
	if err := s.on(q.Name).limits.checkSend(c, q.Name, len(attrs), size, f.DelaySeconds != nil, &delay); err != nil {
		return e, 0, err
	}
	return drivers.SendEntry{
		EntryID: entryID, MessageID: uuid.NewString(), Body: body,
		Attributes: attrs, SystemAttributes: sys, DelaySeconds: delay,
		MessageGroupID: group, MessageDeduplicationID: dedup, SenderID: c.account,
	}, size, nil
}

// needForSend decides the capabilities one message needs.
func needForSend(c *call, q drivers.Queue, f sendFields, attrs map[string]drivers.MessageAttribute) error {
	var ids []capabilities.ID
	if len(attrs) > 0 {
		ids = append(ids, capabilities.MessageAttrs)
	}
	if q.Attributes.FifoQueue {
		// Every FIFO send answers with a SequenceNumber, or degrades without one.
		ids = append(ids, capabilities.FIFOSequenceNumber)
	}
	switch {
	case q.Attributes.FifoQueue && f.MessageDeduplicationId != "":
		ids = append(ids, capabilities.FIFODedupExplicit)
	case q.Attributes.FifoQueue:
		ids = append(ids, capabilities.FIFODedupContent)
	case f.DelaySeconds != nil && *f.DelaySeconds > 0:
		ids = append(ids, capabilities.DelayMessage)
	}
	if !q.Attributes.FifoQueue && f.MessageGroupId != nil {
		// A group on a standard queue names a tenant of a fair queue.
		ids = append(ids, capabilities.FairQueues)
	}
	for _, id := range ids {
		if err := c.need(q.Name, id); err != nil {
			return err
		}
	}
	return nil
}

func sendResult(e drivers.SendEntry, r drivers.SendEntryResult) sendMessageOutput {
	return sendMessageOutput{
		MD5OfMessageBody:             message.MD5OfBody(e.Body),
		MD5OfMessageAttributes:       message.MD5OfAttributes(e.Attributes),
		MD5OfMessageSystemAttributes: message.MD5OfAttributes(e.SystemAttributes),
		MessageId:                    r.MessageID,
		SequenceNumber:               r.SequenceNumber,
	}
}

// sent wakes the long polls a send may satisfy: now, or when the delay ends.
func (s *Server) sent(queue string, entries []drivers.SendEntry) {
	delays := map[int32]bool{}
	for _, e := range entries {
		delays[e.DelaySeconds] = true
	}
	s.wakeAfter(queue, delays)
	s.qm.sent(queue, len(entries))
}

// wakeAfter wakes the queue's long polls after each of the delays, in seconds of gateway
// clock: at once for 0.
func (s *Server) wakeAfter(queue string, delays map[int32]bool) {
	for d := range delays {
		if d == 0 {
			s.waiters.notify(queue)
		} else {
			s.clock.AfterFunc(time.Duration(d)*time.Second, func() { s.waiters.notify(queue) })
		}
	}
}

// deleted records n messages of queue deleted, and wakes its long polls where that may
// make a message receivable: on a FIFO queue, the next of a deleted message's group; on
// any queue at the in-flight limit, whatever waits.
func (s *Server) deleted(queue string, n int) {
	s.qm.deleted(queue, n)
	if s.on(queue).inflight.released(queue, n) || strings.HasSuffix(queue, ".fifo") {
		s.waiters.notify(queue)
	}
}

func (s *Server) sendMessage(ctx context.Context, c *call) (any, error) {
	var in sendMessageInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	q, err := s.hotQueue(ctx, c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	e, _, err := s.prepareSend(c, q, "", in.sendFields)
	if err != nil {
		return nil, err
	}
	res, err := s.on(q.Name).driver.SendMessages(ctx, drivers.SendMessagesRequest{Name: q.Name, Now: s.clock.Now(), Entries: []drivers.SendEntry{e}})
	if err != nil {
		de := driverError(err, q.Name)
		s.forgetIfGone(q.Name, de)
		return nil, de
	}
	if len(res.Entries) != 1 {
		return nil, sqserr.New(sqserr.InternalError, "driver returned %d results for 1 message (queue %s)", len(res.Entries), q.Name)
	}
	if r := res.Entries[0]; r.Err != nil {
		return nil, kindError(r.Err, q.Name)
	}
	s.sent(q.Name, []drivers.SendEntry{e})
	return sendResult(e, res.Entries[0]), nil
}

func (s *Server) sendMessageBatch(ctx context.Context, c *call) (any, error) {
	var in sendMessageBatchInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	q, err := s.hotQueue(ctx, c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	if err := validateBatchIDs(c.action, in.Entries, func(e sendBatchEntry) string { return e.Id }); err != nil {
		return nil, err
	}
	if err := checkFIFOBatch(q, in.Entries); err != nil {
		return nil, err
	}
	out := sendMessageBatchOutput{Successful: make([]sendBatchResultEntry, 0, len(in.Entries)), Failed: []batchErrorEntry{}}
	entries := make([]drivers.SendEntry, 0, len(in.Entries))
	total := 0
	for _, we := range in.Entries {
		e, size, err := s.prepareSend(c, q, we.Id, we.sendFields)
		if err != nil {
			out.Failed = append(out.Failed, errorEntry(we.Id, toSQSError(err)))
			continue
		}
		total += size
		entries = append(entries, e)
	}
	if err := message.CheckBatchSize(total); err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return out, nil
	}
	res, err := s.on(q.Name).driver.SendMessages(ctx, drivers.SendMessagesRequest{Name: q.Name, Now: s.clock.Now(), Entries: entries})
	if err != nil {
		de := driverError(err, q.Name)
		s.forgetIfGone(q.Name, de)
		return nil, de
	}
	if len(res.Entries) != len(entries) {
		return nil, sqserr.New(sqserr.InternalError, "driver returned %d results for %d messages (queue %s)", len(res.Entries), len(entries), q.Name)
	}
	stored := make([]drivers.SendEntry, 0, len(entries))
	for i, r := range res.Entries {
		if r.Err != nil {
			out.Failed = append(out.Failed, entryError(entries[i].EntryID, r.Err, q.Name))
			continue
		}
		stored = append(stored, entries[i])
		out.Successful = append(out.Successful, sendBatchResultEntry{Id: entries[i].EntryID, sendMessageOutput: sendResult(entries[i], r)})
	}
	s.sent(q.Name, stored)
	return out, nil
}

func (s *Server) receiveMessage(ctx context.Context, c *call) (any, error) {
	var in receiveMessageInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	q, err := s.hotQueue(ctx, c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	if err := checkRange("MaxNumberOfMessages", in.MaxNumberOfMessages, 1, sqsrule.MaxReceiveMessages); err != nil {
		return nil, err
	}
	if err := checkRange("VisibilityTimeout", in.VisibilityTimeout, 0, sqsrule.MaxVisibilityTimeout); err != nil {
		return nil, err
	}
	if err := checkRange("WaitTimeSeconds", in.WaitTimeSeconds, 0, sqsrule.MaxWaitTimeSeconds); err != nil {
		return nil, err
	}
	req := drivers.ReceiveMessagesRequest{Name: q.Name, MaxMessages: 1, VisibilityTimeout: q.Attributes.VisibilityTimeout}
	if in.MaxNumberOfMessages != nil {
		req.MaxMessages = int(*in.MaxNumberOfMessages)
	}
	if in.VisibilityTimeout != nil {
		req.VisibilityTimeout = *in.VisibilityTimeout
	}
	if err := s.on(q.Name).limits.visibility(c, q.Name, in.VisibilityTimeout != nil, &req.VisibilityTimeout); err != nil {
		return nil, err
	}
	if q.Attributes.FifoQueue && in.ReceiveRequestAttemptId != "" {
		// Standard queues ignore the attempt id, as SQS does.
		if err := message.ValidateReceiveAttemptID(in.ReceiveRequestAttemptId); err != nil {
			return nil, err
		}
		req.ReceiveRequestAttemptID = in.ReceiveRequestAttemptId
	}
	wait := q.Attributes.ReceiveMessageWaitTimeSeconds
	if in.WaitTimeSeconds != nil {
		wait = *in.WaitTimeSeconds
	}
	if wait > 0 {
		if err := c.need(q.Name, capabilities.LongPolling); err != nil {
			return nil, err
		}
		c.longPoll = true
	}
	if req.ReceiveRequestAttemptID != "" {
		if err := c.need(q.Name, capabilities.FIFOReceiveAttempt); err != nil {
			return nil, err
		}
	}
	if wait > 0 {
		done, err := s.clients.startLongPoll(c.key)
		if err != nil {
			return nil, err
		}
		defer done()
	}
	msgs, err := s.longPoll(ctx, req, time.Duration(wait)*time.Second)
	if err != nil {
		s.forgetIfGone(q.Name, err)
		return nil, err
	}
	sel := newAttributeSelection(append(in.AttributeNames, in.MessageSystemAttributeNames...), in.MessageAttributeNames)
	out := receiveMessageOutput{Messages: []messageOutput{}}
	for _, m := range msgs {
		out.Messages = append(out.Messages, s.renderMessage(m, sel))
	}
	return out, nil
}

// attributeSelection is what ReceiveMessage asked to see of each message.
type attributeSelection struct {
	system      map[string]bool
	allSystem   bool
	names       map[string]bool
	prefixes    []string
	allMessages bool
}

func newAttributeSelection(system, msgAttrs []string) attributeSelection {
	sel := attributeSelection{system: map[string]bool{}, names: map[string]bool{}}
	for _, n := range system {
		if n == "All" {
			sel.allSystem = true
		}
		sel.system[n] = true
	}
	for _, n := range msgAttrs {
		switch {
		case n == "All" || n == ".*" || n == "*":
			sel.allMessages = true
		case strings.HasSuffix(n, ".*"):
			// SQS reads "Hel.*" as the prefix "Hel": it matches Hello and Help.Me.
			sel.prefixes = append(sel.prefixes, strings.TrimSuffix(n, ".*"))
		default:
			sel.names[n] = true
		}
	}
	return sel
}

func (sel attributeSelection) wantSystem(n string) bool { return sel.allSystem || sel.system[n] }

func (sel attributeSelection) wantAttribute(n string) bool {
	if sel.allMessages || sel.names[n] {
		return true
	}
	for _, p := range sel.prefixes {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return false
}

func millis(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }

func (s *Server) renderMessage(m drivers.Message, sel attributeSelection) messageOutput {
	out := messageOutput{MessageId: m.MessageID, ReceiptHandle: m.ReceiptHandle, Body: m.Body, MD5OfBody: message.MD5OfBody(m.Body)}
	sys := map[string]string{}
	add := func(name, v string) {
		if v != "" && sel.wantSystem(name) {
			sys[name] = v
		}
	}
	add("SenderId", m.SenderID)
	add("SentTimestamp", millis(m.SentAt))
	add("ApproximateReceiveCount", strconv.Itoa(int(m.ReceiveCount)))
	if !m.FirstReceivedAt.IsZero() {
		add("ApproximateFirstReceiveTimestamp", millis(m.FirstReceivedAt))
	}
	add("SequenceNumber", m.SequenceNumber)
	add("MessageGroupId", m.MessageGroupID)
	add("MessageDeduplicationId", m.MessageDeduplicationID)
	if m.DeadLetterSource != "" {
		add("DeadLetterQueueSourceArn", s.arn(m.DeadLetterSource))
	}
	if th, ok := m.SystemAttributes[message.AWSTraceHeader]; ok {
		add(message.AWSTraceHeader, th.StringValue)
	}
	if len(sys) > 0 {
		out.Attributes = sys
	}
	picked := map[string]drivers.MessageAttribute{}
	for n, a := range m.Attributes {
		if sel.wantAttribute(n) {
			picked[n] = a
		}
	}
	if len(picked) > 0 {
		// The digest covers the attributes returned, which is what the SDKs recompute.
		out.MD5OfMessageAttributes = message.MD5OfAttributes(picked)
		out.MessageAttributes = make(map[string]messageAttributeValue, len(picked))
		for n, a := range picked {
			out.MessageAttributes[n] = toWire(a)
		}
	}
	return out
}

func (s *Server) deleteMessage(ctx context.Context, c *call) (any, error) {
	var in deleteMessageInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	name, err := s.queueNameFromURL(ctx, c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	if in.ReceiptHandle == "" {
		return nil, sqserr.New(sqserr.MissingParameter, "The request must contain the parameter ReceiptHandle.")
	}
	res, err := s.on(name).driver.DeleteMessages(ctx, drivers.DeleteMessagesRequest{Name: name, Now: s.clock.Now(),
		Entries: []drivers.DeleteEntry{{ReceiptHandle: in.ReceiptHandle}}})
	if err := c.singleResult(res, err, name, in.ReceiptHandle, opDelete); err != nil {
		return nil, err
	}
	s.deleted(name, 1)
	return wire.Empty{}, nil
}

// singleResult turns the result of a one-entry driver batch of op on handle into the
// action's error.
func (c *call) singleResult(res drivers.BatchResult, err error, queue, handle string, op handleOp) error {
	if err != nil {
		return driverError(err, queue)
	}
	if len(res.Entries) != 1 {
		return sqserr.New(sqserr.InternalError, "driver returned %d results for 1 entry (queue %s)", len(res.Entries), queue)
	}
	if e := res.Entries[0].Err; e != nil {
		return c.handleError(e, handle, queue, op, false)
	}
	return nil
}

// validateBatchIDs checks a batch's entry ids: count, format and uniqueness.
func validateBatchIDs[E any](action string, entries []E, id func(E) string) error {
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = id(e)
	}
	return message.ValidateBatchIDsFor(action, ids)
}

// sentHandle is a batch entry given to the driver: its id and receipt handle.
type sentHandle struct{ id, handle string }

// addBatchResult appends a driver batch call's per-entry outcomes (of op) to a
// response's Successful and Failed lists. sent holds the entries the call was given, in
// order; err is the call's own error, which fails the whole request.
func (c *call) addBatchResult(res drivers.BatchResult, err error, sent []sentHandle, queue string, op handleOp, ok *[]idEntry, failed *[]batchErrorEntry) error {
	if err != nil {
		return driverError(err, queue)
	}
	if len(res.Entries) != len(sent) {
		return sqserr.New(sqserr.InternalError, "driver returned %d results for %d entries (queue %s)", len(res.Entries), len(sent), queue)
	}
	for i, r := range res.Entries {
		if r.Err != nil {
			*failed = append(*failed, errorEntry(sent[i].id, c.handleError(r.Err, sent[i].handle, queue, op, true)))
		} else {
			*ok = append(*ok, idEntry{Id: sent[i].id})
		}
	}
	return nil
}

func (s *Server) deleteMessageBatch(ctx context.Context, c *call) (any, error) {
	var in deleteMessageBatchInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	name, err := s.queueNameFromURL(ctx, c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	if err := validateBatchIDs(c.action, in.Entries, func(e deleteBatchEntry) string { return e.Id }); err != nil {
		return nil, err
	}
	out := deleteMessageBatchOutput{Successful: []idEntry{}, Failed: []batchErrorEntry{}}
	var entries []drivers.DeleteEntry
	var sent []sentHandle
	for _, e := range in.Entries {
		if e.ReceiptHandle == "" {
			out.Failed = append(out.Failed, errorEntry(e.Id, sqserr.New(sqserr.MissingParameter, "The request must contain the parameter ReceiptHandle (entry %s).", e.Id)))
			continue
		}
		entries = append(entries, drivers.DeleteEntry{EntryID: e.Id, ReceiptHandle: e.ReceiptHandle})
		sent = append(sent, sentHandle{e.Id, e.ReceiptHandle})
	}
	if len(entries) > 0 {
		res, err := s.on(name).driver.DeleteMessages(ctx, drivers.DeleteMessagesRequest{Name: name, Now: s.clock.Now(), Entries: entries})
		ok := len(out.Successful)
		if err := c.addBatchResult(res, err, sent, name, opDelete, &out.Successful, &out.Failed); err != nil {
			return nil, err
		}
		s.deleted(name, len(out.Successful)-ok)
	}
	return out, nil
}

func (s *Server) changeMessageVisibility(ctx context.Context, c *call) (any, error) {
	var in changeVisibilityInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	name, err := s.queueNameFromURL(ctx, c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	e, err := visibilityEntry("", in.ReceiptHandle, in.VisibilityTimeout)
	if err != nil {
		return nil, err
	}
	if err := needForVisibility(c, name, e); err != nil {
		return nil, err
	}
	if err := s.on(name).limits.visibility(c, name, true, &e.VisibilityTimeout); err != nil {
		return nil, err
	}
	res, err := s.on(name).driver.ChangeVisibility(ctx, drivers.ChangeVisibilityRequest{Name: name, Now: s.clock.Now(), Entries: []drivers.ChangeVisibilityEntry{e}})
	if err := c.singleResult(res, err, name, e.ReceiptHandle, opVisibility); err != nil {
		return nil, err
	}
	s.visibilityChanged(name, []drivers.ChangeVisibilityEntry{e})
	return wire.Empty{}, nil
}

// visibilityEntry validates one visibility change's parameters. The gateway checks the
// per-request bound (0..43200 s); the 12-hour ceiling counted from the receive needs the
// receive time, so the driver enforces it (see drivers.Driver.ChangeVisibility).
func visibilityEntry(id, handle string, timeout *int32) (drivers.ChangeVisibilityEntry, error) {
	if handle == "" {
		return drivers.ChangeVisibilityEntry{}, sqserr.New(sqserr.MissingParameter, "The request must contain the parameter ReceiptHandle.")
	}
	if timeout == nil {
		return drivers.ChangeVisibilityEntry{}, sqserr.New(sqserr.MissingParameter, "The request must contain the parameter VisibilityTimeout.")
	}
	if err := checkRange("VisibilityTimeout", timeout, 0, sqsrule.MaxVisibilityTimeout); err != nil {
		return drivers.ChangeVisibilityEntry{}, err
	}
	return drivers.ChangeVisibilityEntry{EntryID: id, ReceiptHandle: handle, VisibilityTimeout: *timeout}, nil
}

// needForVisibility decides the capabilities of one visibility change.
func needForVisibility(c *call, queue string, e drivers.ChangeVisibilityEntry) error {
	if err := c.need(queue, capabilities.VisibilityChange); err != nil {
		return err
	}
	if e.VisibilityTimeout == 0 {
		return c.need(queue, capabilities.VisibilityRelease)
	}
	return nil
}

// visibilityChanged wakes long polls when a changed message becomes visible again: at
// once for a timeout of 0, else at its new deadline, which may come before the one a
// waiting poll knew of.
func (s *Server) visibilityChanged(queue string, entries []drivers.ChangeVisibilityEntry) {
	timeouts := map[int32]bool{}
	for _, e := range entries {
		timeouts[e.VisibilityTimeout] = true
	}
	s.wakeAfter(queue, timeouts)
}

func (s *Server) changeMessageVisibilityBatch(ctx context.Context, c *call) (any, error) {
	var in changeVisibilityBatchInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	name, err := s.queueNameFromURL(ctx, c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	if err := validateBatchIDs(c.action, in.Entries, func(e changeVisibilityBatchEntry) string { return e.Id }); err != nil {
		return nil, err
	}
	out := changeVisibilityBatchOutput{Successful: []idEntry{}, Failed: []batchErrorEntry{}}
	var entries []drivers.ChangeVisibilityEntry
	var sent []sentHandle
	for _, we := range in.Entries {
		e, err := visibilityEntry(we.Id, we.ReceiptHandle, we.VisibilityTimeout)
		if err == nil {
			err = needForVisibility(c, name, e)
		}
		if err == nil {
			err = s.on(name).limits.visibility(c, name, true, &e.VisibilityTimeout)
		}
		if err != nil {
			out.Failed = append(out.Failed, errorEntry(we.Id, toSQSError(err)))
			continue
		}
		entries = append(entries, e)
		sent = append(sent, sentHandle{we.Id, e.ReceiptHandle})
	}
	if len(entries) > 0 {
		res, err := s.on(name).driver.ChangeVisibility(ctx, drivers.ChangeVisibilityRequest{Name: name, Now: s.clock.Now(), Entries: entries})
		if err := c.addBatchResult(res, err, sent, name, opVisibility, &out.Successful, &out.Failed); err != nil {
			return nil, err
		}
		s.visibilityChanged(name, entries)
	}
	return out, nil
}
