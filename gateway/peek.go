package gateway

import (
	"context"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/gateway/message"
)

// PeekAction is anysqs's extension action that lists a queue's messages without
// receiving them: no receive count, visibility or first-receive change. It is signed and
// authorised as ReceiveMessage on the queue (the owner always; other accounts as the
// queue's policy grants sqs:ReceiveMessage), in both wire protocols
// (X-Amz-Target: AmazonSQS.AnysqsPeekMessages, or Action=AnysqsPeekMessages).
const PeekAction = "AnysqsPeekMessages"

// maxPeekMessages bounds one page of AnysqsPeekMessages.
const maxPeekMessages = 100

type peekMessagesInput struct {
	QueueUrl            string `json:"QueueUrl"`
	MaxNumberOfMessages *int32 `json:"MaxNumberOfMessages"`
	NextToken           string `json:"NextToken"`
}

// peekedMessage is a message as AnysqsPeekMessages shows it: what ReceiveMessage would
// return with every attribute, less the receipt handle, plus its state ("visible",
// "in-flight", "delayed") and, for the last two, when it becomes visible (epoch ms).
type peekedMessage struct {
	MessageId              string                           `json:"MessageId"`
	MD5OfBody              string                           `json:"MD5OfBody"`
	Body                   string                           `json:"Body"`
	State                  string                           `json:"State"`
	VisibleTimestamp       string                           `json:"VisibleTimestamp,omitempty"`
	Attributes             map[string]string                `json:"Attributes,omitempty" sqsxml:"Attribute,Name,Value"`
	MD5OfMessageAttributes string                           `json:"MD5OfMessageAttributes,omitempty"`
	MessageAttributes      map[string]messageAttributeValue `json:"MessageAttributes,omitempty" sqsxml:"MessageAttribute,Name,Value"`
}

type peekMessagesOutput struct {
	Messages  []peekedMessage `json:"Messages,omitempty" sqsxml:"Message"`
	NextToken string          `json:"NextToken,omitempty"`
}

func (s *Server) peekMessages(ctx context.Context, c *call) (any, error) {
	var in peekMessagesInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	q, err := s.hotQueue(ctx, c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	if err := checkRange("MaxNumberOfMessages", in.MaxNumberOfMessages, 1, maxPeekMessages); err != nil {
		return nil, err
	}
	if err := c.need(q.Name, capabilities.QueueBrowse); err != nil {
		return nil, err
	}
	req := drivers.BrowseMessagesRequest{Name: q.Name, Now: s.clock.Now(), After: in.NextToken, Limit: 10}
	if in.MaxNumberOfMessages != nil {
		req.Limit = int(*in.MaxNumberOfMessages)
	}
	res, err := s.on(q.Name).driver.BrowseMessages(ctx, req)
	if err != nil {
		s.forgetIfGone(q.Name, err)
		return nil, driverError(err, q.Name)
	}
	all := newAttributeSelection([]string{"All"}, []string{"All"})
	out := peekMessagesOutput{Messages: []peekedMessage{}, NextToken: res.NextAfter}
	for _, m := range res.Messages {
		r := s.renderMessage(m.Message, all)
		p := peekedMessage{MessageId: r.MessageId, MD5OfBody: message.MD5OfBody(m.Body), Body: m.Body, State: string(m.State),
			Attributes: r.Attributes, MD5OfMessageAttributes: r.MD5OfMessageAttributes, MessageAttributes: r.MessageAttributes}
		if !m.VisibleAt.IsZero() {
			p.VisibleTimestamp = millis(m.VisibleAt)
		}
		out.Messages = append(out.Messages, p)
	}
	return out, nil
}
