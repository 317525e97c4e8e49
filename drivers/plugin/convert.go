package plugin

import (
	"time"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
	pb "github.com/anysqs/anysqs/drivers/plugin/internal/driverpb"
)

// Translation between the drivers types and their protobuf form, both ways. Every Go
// value a driver can see survives the round trip except that an empty slice arrives as
// nil (proto3 cannot tell them apart, and the contract gives them the same meaning);
// maps, times, pointers and binary values keep nil, zero and empty apart.

func toTime(t time.Time) *pb.Time {
	if t.IsZero() {
		return nil
	}
	return &pb.Time{Seconds: t.Unix(), Nanos: int32(t.Nanosecond())}
}

// fromTime returns UTC times: the zero time, unset, is UTC too, and drivers compare
// and store instants, never zones.
func fromTime(t *pb.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return time.Unix(t.Seconds, int64(t.Nanos)).UTC()
}

func toStringMap(m map[string]string) *pb.StringMap {
	if m == nil {
		return nil
	}
	return &pb.StringMap{Entries: m}
}

func fromStringMap(m *pb.StringMap) map[string]string {
	if m == nil {
		return nil
	}
	if m.Entries == nil {
		return map[string]string{}
	}
	return m.Entries
}

func toAttrs(m map[string]drivers.MessageAttribute) *pb.AttributeMap {
	if m == nil {
		return nil
	}
	out := &pb.AttributeMap{Entries: make(map[string]*pb.MessageAttribute, len(m))}
	for k, v := range m {
		a := &pb.MessageAttribute{DataType: v.DataType, StringValue: v.StringValue}
		if v.BinaryValue != nil {
			a.BinaryValue = v.BinaryValue
		}
		out.Entries[k] = a
	}
	return out
}

func fromAttrs(m *pb.AttributeMap) map[string]drivers.MessageAttribute {
	if m == nil {
		return nil
	}
	out := make(map[string]drivers.MessageAttribute, len(m.Entries))
	for k, v := range m.Entries {
		a := drivers.MessageAttribute{DataType: v.GetDataType(), StringValue: v.GetStringValue()}
		if v.BinaryValue != nil {
			a.BinaryValue = v.BinaryValue
			if len(a.BinaryValue) == 0 {
				a.BinaryValue = []byte{}
			}
		}
		out[k] = a
	}
	return out
}

func emptyNil[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

func mapSlice[T, U any](in []T, f func(T) U) []U {
	if len(in) == 0 {
		return nil
	}
	out := make([]U, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}

func toDescription(d drivers.Description) *pb.Description {
	return &pb.Description{
		Name: d.Name, Version: d.Version, ServiceVersion: d.ServiceVersion,
		Clock: string(d.Clock), ReceiptScope: string(d.ReceiptScope), SharedStorage: d.SharedStorage,
		Activity: string(d.Activity), PollIntervalNs: int64(d.PollInterval), BlockingReceive: d.BlockingReceive,
		MoveTaskStore: d.MoveTaskStore, Warnings: d.Warnings,
		Operations: &pb.Operations{Durability: d.Operations.Durability, Availability: d.Operations.Availability,
			ScaleOut: d.Operations.ScaleOut, Ordering: d.Operations.Ordering, Throughput: d.Operations.Throughput,
			CostDrivers: d.Operations.CostDrivers, RunsWhere: d.Operations.RunsWhere},
		Capabilities: mapSlice(d.Capabilities, func(c capabilities.Declaration) *pb.Declaration {
			return &pb.Declaration{Id: string(c.ID), Level: string(c.Level), Limits: toStringMap(c.Limits), Note: c.Note}
		}),
	}
}

func fromDescription(d *pb.Description) drivers.Description {
	return drivers.Description{
		Name: d.GetName(), Version: d.GetVersion(), ServiceVersion: d.GetServiceVersion(),
		Clock: drivers.ClockKind(d.GetClock()), ReceiptScope: drivers.ReceiptScope(d.GetReceiptScope()),
		SharedStorage: d.GetSharedStorage(), Activity: drivers.ActivityMode(d.GetActivity()),
		PollInterval: time.Duration(d.GetPollIntervalNs()), BlockingReceive: d.GetBlockingReceive(),
		MoveTaskStore: d.GetMoveTaskStore(), Warnings: emptyNil(d.GetWarnings()),
		Operations: capabilities.Operations{Durability: d.GetOperations().GetDurability(),
			Availability: d.GetOperations().GetAvailability(), ScaleOut: d.GetOperations().GetScaleOut(),
			Ordering: d.GetOperations().GetOrdering(), Throughput: d.GetOperations().GetThroughput(),
			CostDrivers: d.GetOperations().GetCostDrivers(), RunsWhere: d.GetOperations().GetRunsWhere()},
		Capabilities: mapSlice(d.GetCapabilities(), func(c *pb.Declaration) capabilities.Declaration {
			return capabilities.Declaration{ID: capabilities.ID(c.GetId()), Level: capabilities.Level(c.GetLevel()),
				Limits: fromStringMap(c.GetLimits()), Note: c.GetNote()}
		}),
	}
}

func toMetrics(ms []drivers.Metric) *pb.MetricsResult {
	return &pb.MetricsResult{Metrics: mapSlice(ms, func(m drivers.Metric) *pb.Metric {
		return &pb.Metric{Name: m.Name, Help: m.Help, Type: string(m.Type), Value: m.Value,
			Labels: mapSlice(m.Labels, func(l drivers.Label) *pb.Label { return &pb.Label{Name: l.Name, Value: l.Value} })}
	})}
}

func fromMetrics(r *pb.MetricsResult) []drivers.Metric {
	return mapSlice(r.GetMetrics(), func(m *pb.Metric) drivers.Metric {
		return drivers.Metric{Name: m.GetName(), Help: m.GetHelp(), Type: drivers.MetricType(m.GetType()), Value: m.GetValue(),
			Labels: mapSlice(m.GetLabels(), func(l *pb.Label) drivers.Label { return drivers.Label{Name: l.GetName(), Value: l.GetValue()} })}
	})
}

func toAttributes(a drivers.QueueAttributes) *pb.QueueAttributes {
	out := &pb.QueueAttributes{
		DelaySeconds: a.DelaySeconds, MaximumMessageSize: a.MaximumMessageSize,
		MessageRetentionPeriod: a.MessageRetentionPeriod, ReceiveMessageWaitTimeSeconds: a.ReceiveMessageWaitTimeSeconds,
		VisibilityTimeout: a.VisibilityTimeout, RedriveAllowPolicy: a.RedriveAllowPolicy, Policy: a.Policy,
		FifoQueue: a.FifoQueue, ContentBasedDeduplication: a.ContentBasedDeduplication,
		DeduplicationScope: a.DeduplicationScope, FifoThroughputLimit: a.FifoThroughputLimit,
		KmsMasterKeyId: a.KmsMasterKeyID, KmsDataKeyReusePeriodSeconds: a.KmsDataKeyReusePeriodSeconds,
		SqsManagedSseEnabled: a.SqsManagedSseEnabled,
	}
	if p := a.RedrivePolicy; p != nil {
		out.RedrivePolicy = &pb.RedrivePolicy{DeadLetterQueue: p.DeadLetterQueue, MaxReceiveCount: p.MaxReceiveCount}
	}
	return out
}

func fromAttributes(a *pb.QueueAttributes) drivers.QueueAttributes {
	out := drivers.QueueAttributes{
		DelaySeconds: a.GetDelaySeconds(), MaximumMessageSize: a.GetMaximumMessageSize(),
		MessageRetentionPeriod: a.GetMessageRetentionPeriod(), ReceiveMessageWaitTimeSeconds: a.GetReceiveMessageWaitTimeSeconds(),
		VisibilityTimeout: a.GetVisibilityTimeout(), RedriveAllowPolicy: a.GetRedriveAllowPolicy(), Policy: a.GetPolicy(),
		FifoQueue: a.GetFifoQueue(), ContentBasedDeduplication: a.GetContentBasedDeduplication(),
		DeduplicationScope: a.GetDeduplicationScope(), FifoThroughputLimit: a.GetFifoThroughputLimit(),
		KmsMasterKeyID: a.GetKmsMasterKeyId(), KmsDataKeyReusePeriodSeconds: a.GetKmsDataKeyReusePeriodSeconds(),
		SqsManagedSseEnabled: a.GetSqsManagedSseEnabled(),
	}
	if p := a.GetRedrivePolicy(); p != nil {
		out.RedrivePolicy = &drivers.RedrivePolicy{DeadLetterQueue: p.GetDeadLetterQueue(), MaxReceiveCount: p.GetMaxReceiveCount()}
	}
	return out
}

func toQueue(q drivers.Queue) *pb.Queue {
	return &pb.Queue{Name: q.Name, Attributes: toAttributes(q.Attributes), Tags: toStringMap(q.Tags),
		CreatedAt: toTime(q.CreatedAt), LastModified: toTime(q.LastModified)}
}

func fromQueue(q *pb.Queue) drivers.Queue {
	return drivers.Queue{Name: q.GetName(), Attributes: fromAttributes(q.GetAttributes()), Tags: fromStringMap(q.GetTags()),
		CreatedAt: fromTime(q.GetCreatedAt()), LastModified: fromTime(q.GetLastModified())}
}

func toSendEntry(e drivers.SendEntry) *pb.SendEntry {
	return &pb.SendEntry{EntryId: e.EntryID, MessageId: e.MessageID, Body: e.Body,
		Attributes: toAttrs(e.Attributes), SystemAttributes: toAttrs(e.SystemAttributes),
		DelaySeconds: e.DelaySeconds, MessageGroupId: e.MessageGroupID,
		MessageDeduplicationId: e.MessageDeduplicationID, SenderId: e.SenderID}
}

func fromSendEntry(e *pb.SendEntry) drivers.SendEntry {
	return drivers.SendEntry{EntryID: e.GetEntryId(), MessageID: e.GetMessageId(), Body: e.GetBody(),
		Attributes: fromAttrs(e.GetAttributes()), SystemAttributes: fromAttrs(e.GetSystemAttributes()),
		DelaySeconds: e.GetDelaySeconds(), MessageGroupID: e.GetMessageGroupId(),
		MessageDeduplicationID: e.GetMessageDeduplicationId(), SenderID: e.GetSenderId()}
}

func toSendEntryResult(r drivers.SendEntryResult) *pb.SendEntryResult {
	return &pb.SendEntryResult{EntryId: r.EntryID, MessageId: r.MessageID, SequenceNumber: r.SequenceNumber,
		Duplicate: r.Duplicate, Err: toErrorDetail(r.Err)}
}

func fromSendEntryResult(r *pb.SendEntryResult) drivers.SendEntryResult {
	return drivers.SendEntryResult{EntryID: r.GetEntryId(), MessageID: r.GetMessageId(),
		SequenceNumber: r.GetSequenceNumber(), Duplicate: r.GetDuplicate(), Err: fromErrorDetail(r.GetErr())}
}

func toMessage(m drivers.Message) *pb.Message {
	return &pb.Message{MessageId: m.MessageID, ReceiptHandle: m.ReceiptHandle, Body: m.Body,
		Attributes: toAttrs(m.Attributes), SystemAttributes: toAttrs(m.SystemAttributes), SenderId: m.SenderID,
		SentAt: toTime(m.SentAt), FirstReceivedAt: toTime(m.FirstReceivedAt), ReceiveCount: m.ReceiveCount,
		MessageGroupId: m.MessageGroupID, MessageDeduplicationId: m.MessageDeduplicationID,
		SequenceNumber: m.SequenceNumber, DeadLetterSource: m.DeadLetterSource}
}

func fromMessage(m *pb.Message) drivers.Message {
	return drivers.Message{MessageID: m.GetMessageId(), ReceiptHandle: m.GetReceiptHandle(), Body: m.GetBody(),
		Attributes: fromAttrs(m.GetAttributes()), SystemAttributes: fromAttrs(m.GetSystemAttributes()),
		SenderID: m.GetSenderId(), SentAt: fromTime(m.GetSentAt()), FirstReceivedAt: fromTime(m.GetFirstReceivedAt()),
		ReceiveCount: m.GetReceiveCount(), MessageGroupID: m.GetMessageGroupId(),
		MessageDeduplicationID: m.GetMessageDeduplicationId(), SequenceNumber: m.GetSequenceNumber(),
		DeadLetterSource: m.GetDeadLetterSource()}
}

func toBrowsedMessage(m drivers.BrowsedMessage) *pb.BrowsedMessage {
	return &pb.BrowsedMessage{Message: toMessage(m.Message), State: string(m.State), VisibleAt: toTime(m.VisibleAt)}
}

func fromBrowsedMessage(m *pb.BrowsedMessage) drivers.BrowsedMessage {
	return drivers.BrowsedMessage{Message: fromMessage(m.GetMessage()), State: drivers.MessageState(m.GetState()),
		VisibleAt: fromTime(m.GetVisibleAt())}
}

func toBatchResult(r drivers.BatchResult) *pb.BatchResult {
	return &pb.BatchResult{Entries: mapSlice(r.Entries, func(e drivers.EntryResult) *pb.EntryResult {
		return &pb.EntryResult{EntryId: e.EntryID, Err: toErrorDetail(e.Err)}
	})}
}

func fromBatchResult(r *pb.BatchResult) drivers.BatchResult {
	return drivers.BatchResult{Entries: mapSlice(r.GetEntries(), func(e *pb.EntryResult) drivers.EntryResult {
		return drivers.EntryResult{EntryID: e.GetEntryId(), Err: fromErrorDetail(e.GetErr())}
	})}
}

func toMoveTask(t drivers.MoveTask) *pb.MoveTask {
	return &pb.MoveTask{Handle: t.Handle, Source: t.Source, Destination: t.Destination, Rate: t.Rate,
		Started: toTime(t.Started), ToMove: t.ToMove, Moved: t.Moved, Status: t.Status, Failure: t.Failure,
		Owner: t.Owner, LeaseUntil: toTime(t.LeaseUntil)}
}

func fromMoveTask(t *pb.MoveTask) drivers.MoveTask {
	return drivers.MoveTask{Handle: t.GetHandle(), Source: t.GetSource(), Destination: t.GetDestination(), Rate: t.Rate,
		Started: fromTime(t.GetStarted()), ToMove: t.GetToMove(), Moved: t.GetMoved(), Status: t.GetStatus(),
		Failure: t.GetFailure(), Owner: t.GetOwner(), LeaseUntil: fromTime(t.GetLeaseUntil())}
}

func toMoveTasks(ts []drivers.MoveTask) *pb.MoveTasks {
	return &pb.MoveTasks{Tasks: mapSlice(ts, toMoveTask)}
}

func fromMoveTasks(ts *pb.MoveTasks) []drivers.MoveTask { return mapSlice(ts.GetTasks(), fromMoveTask) }

func toMoveTaskStep(t *drivers.MoveTaskStep) *pb.MoveTaskStep {
	if t == nil {
		return nil
	}
	return &pb.MoveTaskStep{Handle: t.Handle, Owner: t.Owner, LeaseUntil: toTime(t.LeaseUntil)}
}

func fromMoveTaskStep(t *pb.MoveTaskStep) *drivers.MoveTaskStep {
	if t == nil {
		return nil
	}
	return &drivers.MoveTaskStep{Handle: t.GetHandle(), Owner: t.GetOwner(), LeaseUntil: fromTime(t.GetLeaseUntil())}
}
