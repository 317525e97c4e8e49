package gateway

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
	"github.com/anysqs/anysqs/gateway/policy"
	"github.com/anysqs/anysqs/gateway/queueattr"
	"github.com/anysqs/anysqs/gateway/sqserr"
	"github.com/anysqs/anysqs/gateway/wire"
)

const (
	maxListResults = 1000
)

func (s *Server) createQueue(ctx context.Context, c *call) (any, error) {
	var in createQueueInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	if in.QueueName == "" {
		return nil, sqserr.New(sqserr.MissingParameter, "The request must contain the parameter QueueName.")
	}
	attrs, err := queueattr.ForCreate(in.QueueName, in.Attributes, s.parseARN)
	if err != nil {
		return nil, err
	}
	if _, set := in.Attributes[queueattr.SqsManagedSseEnabled]; !set && !s.encryptsAtRest(in.QueueName) {
		// SQS turns SSE on by default; a backend that does not encrypt must not claim it.
		attrs.SqsManagedSseEnabled = false
	}
	if err := s.checkNameFits(c.account, in.QueueName); err != nil {
		return nil, err
	}
	if err := s.needForCreate(c, in, attrs); err != nil {
		return nil, err
	}
	if err := validateTags(in.Tags); err != nil {
		return nil, err
	}
	if err := s.on(in.QueueName).limits.checkTags(len(in.Tags)); err != nil {
		return nil, err
	}
	if err := s.on(in.QueueName).limits.checkAttributes(c, in.QueueName, in.Attributes, attrs); err != nil {
		return nil, err
	}
	if err := policy.CheckQueuePolicy(attrs.Policy); err != nil {
		return nil, err
	}
	stored := s.storedName(c.account, in.QueueName)
	if err := s.checkRedriveTarget(ctx, stored, attrs); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	res, err := s.on(stored).driver.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{
		Name: stored, Attributes: attrs, Tags: in.Tags, CreatedAt: now, LastModified: now,
	}})
	s.queues.invalidate(stored)
	if err != nil {
		return nil, driverError(err, in.QueueName)
	}
	if res.Existed {
		if n := queueattr.FirstMismatch(res.Queue.Attributes, in.Attributes, s.parseARN); n != "" {
			return nil, sqserr.New(sqserr.QueueNameExists, "A queue already exists with the same name and a different value for attribute %s", n)
		}
	}
	return queueURLOutput{QueueUrl: s.queueURL(c.base, stored)}, nil
}

// fairNative says whether the backend serves fair queues natively, and so counts their
// noisy and quiet groups.
func (s *Server) fairNative(queue string) bool {
	d, ok := s.on(queue).policy.Declaration(capabilities.FairQueues)
	return ok && d.Level == capabilities.Native
}

// encryptsAtRest says whether the backend declares server-side encryption native, which
// is what SqsManagedSseEnabled=true claims.
func (s *Server) encryptsAtRest(queue string) bool {
	d, ok := s.on(queue).policy.Declaration(capabilities.AttrSSE)
	return ok && d.Level == capabilities.Native
}

// needForCreate decides the capabilities a CreateQueue request needs.
func (s *Server) needForCreate(c *call, in createQueueInput, attrs drivers.QueueAttributes) error {
	kind := capabilities.QueueStandard
	if attrs.FifoQueue {
		kind = capabilities.QueueFIFO
	}
	if err := c.need(in.QueueName, kind); err != nil {
		return err
	}
	if err := c.need(in.QueueName, capabilities.QueueCreate); err != nil {
		return err
	}
	if len(in.Tags) > 0 {
		if err := c.need(in.QueueName, capabilities.QueueTags); err != nil {
			return err
		}
	}
	return c.needAttributes(in.QueueName, in.Attributes)
}

// checkRedriveTarget checks what queueattr cannot see: that the dead-letter queue of
// attrs exists, is of the same type, and that its RedriveAllowPolicy admits queue.
func (s *Server) checkRedriveTarget(ctx context.Context, queue string, attrs drivers.QueueAttributes) error {
	rp := attrs.RedrivePolicy
	if rp == nil {
		return nil
	}
	if owner, _ := s.splitStored(queue); !s.ownedBy(rp.DeadLetterQueue, owner) {
		// SQS keeps a queue and its dead-letter queue in one account.
		return sqserr.New(sqserr.InvalidParameterValue, "Value %s for parameter RedrivePolicy is invalid. Reason: Dead letter target does not exist.", s.arn(rp.DeadLetterQueue))
	}
	if err := s.sameBackend("Dead-letter queue", queue, rp.DeadLetterQueue); err != nil {
		return err
	}
	dlq, err := s.on(rp.DeadLetterQueue).driver.GetQueue(ctx, drivers.GetQueueRequest{Name: rp.DeadLetterQueue})
	if drivers.KindOf(err) == drivers.KindNotFound {
		return sqserr.New(sqserr.InvalidParameterValue, "Value %s for parameter RedrivePolicy is invalid. Reason: Dead letter target does not exist.", s.arn(rp.DeadLetterQueue))
	}
	if err != nil {
		return driverError(err, rp.DeadLetterQueue)
	}
	if dlq.Attributes.FifoQueue != attrs.FifoQueue {
		return sqserr.New(sqserr.InvalidParameterValue, "Value %s for parameter RedrivePolicy is invalid. Reason: Dead-letter queue %s must be the same type of queue (standard or FIFO) as the source queue %s.", s.arn(rp.DeadLetterQueue), rp.DeadLetterQueue, queue)
	}
	if !queueattr.RedriveAllowPolicyAdmits(dlq.Attributes.RedriveAllowPolicy, s.arn(queue)) {
		return sqserr.New(sqserr.InvalidParameterValue, "Value %s for parameter RedrivePolicy is invalid. Reason: The RedriveAllowPolicy of dead-letter queue %s does not allow %s as a source queue.", s.arn(rp.DeadLetterQueue), rp.DeadLetterQueue, queue)
	}
	return nil
}

func validateTags(tags map[string]string) error {
	if len(tags) > sqsrule.MaxQueueTags {
		return sqserr.New(sqserr.InvalidParameterValue, "Too many tags: %d (a queue has at most %d).", len(tags), sqsrule.MaxQueueTags)
	}
	for k, v := range tags {
		if k == "" || len(k) > 128 {
			return sqserr.New(sqserr.InvalidParameterValue, "Tag key %q is invalid: 1 to 128 characters.", k)
		}
		if strings.HasPrefix(strings.ToLower(k), "aws:") {
			return sqserr.New(sqserr.InvalidParameterValue, "Tag key %q is invalid: the aws: prefix is reserved.", k)
		}
		if len(v) > 256 {
			return sqserr.New(sqserr.InvalidParameterValue, "The value of tag %q is longer than 256 characters.", k)
		}
	}
	return nil
}

// getQueue resolves a queue URL sent by c to the stored queue.
func (s *Server) getQueue(ctx context.Context, c *call, queueURL string) (drivers.Queue, error) {
	name, err := s.queueNameFromURL(ctx, c, queueURL)
	if err != nil {
		return drivers.Queue{}, err
	}
	q, err := s.on(name).driver.GetQueue(ctx, drivers.GetQueueRequest{Name: name})
	if err != nil {
		return drivers.Queue{}, driverError(err, name)
	}
	return q, nil
}

// hotQueue is getQueue for message operations (send, receive): it reads through the
// queue cache, so most calls cost no backend round trip. Management actions use getQueue
// and always see the backend's current state.
func (s *Server) hotQueue(ctx context.Context, c *call, queueURL string) (drivers.Queue, error) {
	name, err := s.queueNameFromURL(ctx, c, queueURL)
	if err != nil {
		return drivers.Queue{}, err
	}
	now := s.clock.Now()
	q, ok, gen := s.queues.get(name, now)
	if ok {
		return q, nil
	}
	q, err = s.on(name).driver.GetQueue(ctx, drivers.GetQueueRequest{Name: name})
	if err != nil {
		return drivers.Queue{}, driverError(err, name)
	}
	s.queues.put(q, gen, now)
	return q, nil
}

// forgetIfGone drops queue's cache entry when err says the queue no longer exists (it
// was deleted through another gateway instance), so the next call asks the backend.
func (s *Server) forgetIfGone(queue string, err error) {
	var se *sqserr.Error
	if errors.As(err, &se) && se.Code == sqserr.QueueDoesNotExist {
		s.queues.invalidate(queue)
	}
}

func (s *Server) getQueueURL(ctx context.Context, c *call) (any, error) {
	var in getQueueURLInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	if in.QueueName == "" {
		return nil, sqserr.New(sqserr.MissingParameter, "The request must contain the parameter QueueName.")
	}
	owner := c.account
	if in.QueueOwnerAWSAccountId != "" {
		owner = in.QueueOwnerAWSAccountId
	}
	if !policy.IsAccountID(owner) || strings.Contains(in.QueueName, nsSeparator) {
		return nil, sqserr.New(sqserr.QueueDoesNotExist, "The specified queue %s does not exist for account %s.", in.QueueName, owner)
	}
	stored := s.storedName(owner, in.QueueName)
	if err := s.authorize(ctx, c, stored); err != nil {
		return nil, err
	}
	if _, err := s.on(stored).driver.GetQueue(ctx, drivers.GetQueueRequest{Name: stored}); err != nil {
		return nil, driverError(err, in.QueueName)
	}
	return queueURLOutput{QueueUrl: s.queueURL(c.base, stored)}, nil
}

// pageLimit validates MaxResults; it is required with NextToken, as SQS requires.
func pageLimit(max *int32, token string) (int, error) {
	if max == nil {
		if token != "" {
			return 0, sqserr.New(sqserr.InvalidParameterValue, "Value for parameter MaxResults is missing. Reason: MaxResults is required when NextToken is given.")
		}
		return maxListResults, nil
	}
	if *max < 1 || *max > maxListResults {
		return 0, sqserr.New(sqserr.InvalidParameterValue, "Value %d for parameter MaxResults is invalid. Reason: must be between 1 and %d.", *max, maxListResults)
	}
	return int(*max), nil
}

// Page tokens are the base64 of the last name returned; the driver pages by name.
func encodeToken(after string) string { return base64.RawURLEncoding.EncodeToString([]byte(after)) }

func decodeToken(tok string) (string, error) {
	if tok == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return "", sqserr.New(sqserr.InvalidParameterValue, "Value %s for parameter NextToken is invalid.", tok)
	}
	return string(b), nil
}

func (s *Server) listQueues(ctx context.Context, c *call) (any, error) {
	var in listQueuesInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	limit, err := pageLimit(in.MaxResults, in.NextToken)
	if err != nil {
		return nil, err
	}
	after, err := decodeToken(in.NextToken)
	if err != nil {
		return nil, err
	}
	names, more, err := s.accountQueues(ctx, c.account, in.QueueNamePrefix, after, limit)
	if err != nil {
		return nil, driverError(err, in.QueueNamePrefix+"*")
	}
	out := listQueuesOutput{QueueUrls: []string{}}
	for _, n := range names {
		out.QueueUrls = append(out.QueueUrls, s.queueURL(c.base, n))
	}
	if more && in.MaxResults != nil && len(names) > 0 {
		out.NextToken = encodeToken(names[len(names)-1])
	}
	return out, nil
}

func (s *Server) listDeadLetterSourceQueues(ctx context.Context, c *call) (any, error) {
	var in listDLQSourcesInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	dlq, err := s.getQueue(ctx, c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	if err := c.need(dlq.Name, capabilities.RedriveDLQ); err != nil {
		return nil, err
	}
	limit, err := pageLimit(in.MaxResults, in.NextToken)
	if err != nil {
		return nil, err
	}
	after, err := decodeToken(in.NextToken)
	if err != nil {
		return nil, err
	}
	sources, more, err := s.deadLetterSources(ctx, dlq.Name, after, limit)
	if err != nil {
		return nil, err
	}
	out := listDLQSourcesOutput{QueueUrls: []string{}}
	for _, n := range sources {
		out.QueueUrls = append(out.QueueUrls, s.queueURL(c.base, n))
	}
	if more && in.MaxResults != nil && len(sources) > 0 {
		out.NextToken = encodeToken(sources[len(sources)-1])
	}
	return out, nil
}

// deadLetterSources lists, in name order after after, the queues whose RedrivePolicy names
// dlq. The driver has no index for it, so this scans the queue list page by page.
func (s *Server) deadLetterSources(ctx context.Context, dlq, after string, limit int) ([]string, bool, error) {
	var out []string
	for {
		owner, _ := s.splitStored(dlq)
		res, err := s.listAll(ctx, drivers.ListQueuesRequest{Prefix: s.listPrefix(owner, ""), After: after, Limit: 1000})
		if err != nil {
			return nil, false, driverError(err, dlq)
		}
		for _, q := range res.Queues {
			after = q.Name
			if rp := q.Attributes.RedrivePolicy; rp != nil && rp.DeadLetterQueue == dlq {
				if len(out) == limit {
					return out, true, nil
				}
				out = append(out, q.Name)
			}
		}
		if !res.More || len(res.Queues) == 0 {
			return out, false, nil
		}
	}
}

func (s *Server) deleteQueue(ctx context.Context, c *call) (any, error) {
	var in queueURLInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	name, err := s.queueNameFromURL(ctx, c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	if err := c.need(name, capabilities.QueueCreate); err != nil {
		return nil, err
	}
	err = s.on(name).driver.DeleteQueue(ctx, drivers.DeleteQueueRequest{Name: name, Now: s.clock.Now()})
	s.queues.invalidate(name)
	s.on(name).inflight.forget(name)
	if err != nil {
		return nil, driverError(err, name)
	}
	s.qm.forget(name)
	// Long polls on the queue end now rather than at their deadline.
	s.waiters.notify(name)
	return wire.Empty{}, nil
}

func (s *Server) getQueueAttributes(ctx context.Context, c *call) (any, error) {
	var in getQueueAttributesInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	q, err := s.getQueue(ctx, c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	var stats *drivers.QueueStats
	groups := queueattr.NeedsGroups(in.AttributeNames) && !q.Attributes.FifoQueue && s.fairNative(q.Name)
	if queueattr.NeedsStats(in.AttributeNames) || groups {
		st, err := s.on(q.Name).driver.QueueStats(ctx, drivers.QueueStatsRequest{Name: q.Name, Now: s.clock.Now(), Groups: groups})
		if err != nil {
			return nil, driverError(err, q.Name)
		}
		stats = &st
	}
	attrs, err := queueattr.Render(q, stats, in.AttributeNames, s.arn)
	if err != nil {
		return nil, err
	}
	if groups {
		queueattr.RenderGroups(attrs, *stats, in.AttributeNames)
	}
	return attributesOutput{Attributes: attrs}, nil
}

func (s *Server) setQueueAttributes(ctx context.Context, c *call) (any, error) {
	var in setQueueAttributesInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	q, err := s.getQueue(ctx, c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	if len(in.Attributes) == 0 {
		return nil, sqserr.New(sqserr.MissingParameter, "The request must contain the parameter Attribute.N.Name (queue %s).", q.Name)
	}
	return s.changeAttributes(ctx, c, q, in.Attributes)
}

// changeAttributes merges change into q's attributes and stores them, after the checks
// every attribute change goes through: validation, the capabilities it needs, declared
// limits and, for a redrive policy, its target. SetQueueAttributes and the permission
// actions (which change Policy) share it.
func (s *Server) changeAttributes(ctx context.Context, c *call, q drivers.Queue, change map[string]string) (any, error) {
	attrs, err := queueattr.Apply(q.Attributes, change, s.parseARN)
	if err != nil {
		return nil, err
	}
	if err := policy.CheckQueuePolicy(attrs.Policy); err != nil {
		return nil, err
	}
	if err := c.needAttributes(q.Name, change); err != nil {
		return nil, err
	}
	if err := s.on(q.Name).limits.checkAttributes(c, q.Name, change, attrs); err != nil {
		return nil, err
	}
	if _, changed := change[queueattr.RedrivePolicy]; changed {
		if err := s.checkRedriveTarget(ctx, q.Name, attrs); err != nil {
			return nil, err
		}
	}
	err = s.on(q.Name).driver.SetQueueAttributes(ctx, drivers.SetQueueAttributesRequest{Name: q.Name, Attributes: attrs, Now: s.clock.Now()})
	s.queues.invalidate(q.Name)
	if err != nil {
		return nil, driverError(err, q.Name)
	}
	return wire.Empty{}, nil
}

func (s *Server) purgeQueue(ctx context.Context, c *call) (any, error) {
	var in queueURLInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	name, err := s.queueNameFromURL(ctx, c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	if err := c.need(name, capabilities.QueuePurge); err != nil {
		return nil, err
	}
	if err := s.on(name).driver.PurgeQueue(ctx, drivers.PurgeQueueRequest{Name: name, Now: s.clock.Now()}); err != nil {
		return nil, driverError(err, name)
	}
	s.on(name).inflight.forget(name)
	return wire.Empty{}, nil
}

func (s *Server) tagQueue(ctx context.Context, c *call) (any, error) {
	var in tagQueueInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	q, err := s.getQueue(ctx, c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	if len(in.Tags) == 0 {
		return nil, sqserr.New(sqserr.MissingParameter, "The request must contain the parameter Tags (queue %s).", q.Name)
	}
	if err := c.need(q.Name, capabilities.QueueTags); err != nil {
		return nil, err
	}
	merged := make(map[string]string, len(q.Tags)+len(in.Tags))
	for k, v := range q.Tags {
		merged[k] = v
	}
	for k, v := range in.Tags {
		merged[k] = v
	}
	if err := validateTags(merged); err != nil {
		return nil, err
	}
	if err := s.on(q.Name).limits.checkTags(len(merged)); err != nil {
		return nil, err
	}
	err = s.on(q.Name).driver.UpdateQueueTags(ctx, drivers.UpdateQueueTagsRequest{Name: q.Name, Set: in.Tags})
	s.queues.invalidate(q.Name)
	if err != nil {
		return nil, driverError(err, q.Name)
	}
	return wire.Empty{}, nil
}

func (s *Server) untagQueue(ctx context.Context, c *call) (any, error) {
	var in untagQueueInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	name, err := s.queueNameFromURL(ctx, c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	if len(in.TagKeys) == 0 {
		return nil, sqserr.New(sqserr.MissingParameter, "The request must contain the parameter TagKeys (queue %s).", name)
	}
	if err := c.need(name, capabilities.QueueTags); err != nil {
		return nil, err
	}
	err = s.on(name).driver.UpdateQueueTags(ctx, drivers.UpdateQueueTagsRequest{Name: name, Remove: in.TagKeys})
	s.queues.invalidate(name)
	if err != nil {
		return nil, driverError(err, name)
	}
	return wire.Empty{}, nil
}

func (s *Server) listQueueTags(ctx context.Context, c *call) (any, error) {
	var in queueURLInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	q, err := s.getQueue(ctx, c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	if err := c.need(q.Name, capabilities.QueueTags); err != nil {
		return nil, err
	}
	return tagsOutput{Tags: q.Tags}, nil
}
