package servicebus

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

// dedupKey names one Service Bus MessageID sent to one queue through this instance.
type dedupKey struct{ queue, id string }

// dedupSeen is the SQS MessageId under which this instance last sent a MessageID.
type dedupSeen struct {
	messageID string
	at        time.Time
}

// holds says whether the send still deduplicates at now. No purge time applies: the
// entity's duplicate detection keeps its history across a purge, as Describe declares.
func (s dedupSeen) holds(now time.Time) bool {
	return sqsrule.DedupHolds(sqsrule.DedupExpiry(s.at), now, time.Time{})
}

// SendMessages sends each entry as one Service Bus message, or schedules it when it is
// delayed. On FIFO queues the session is the message group and the Service Bus
// MessageID is the deduplication id (hashed with the group for DeduplicationScope
// messageGroup), so the entity's duplicate detection drops repeats. Service Bus does not
// say when it dropped one: the driver reports a duplicate only when it sent that
// MessageID itself, through this instance, within the window.
func (d *Driver) SendMessages(ctx context.Context, req drivers.SendMessagesRequest) (drivers.SendMessagesResult, error) {
	if err := d.checkOpen(); err != nil {
		return drivers.SendMessagesResult{}, err
	}
	fifo := isFIFO(req.Name)
	var scope string
	if fifo {
		var err error
		if scope, err = d.dedupScope(ctx, req.Name); err != nil {
			return drivers.SendMessagesResult{}, err
		}
	}
	out := drivers.SendMessagesResult{Entries: make([]drivers.SendEntryResult, len(req.Entries))}
	failed := map[string]*drivers.Error{} // FIFO group -> the error of its first failed entry
	for i, e := range req.Entries {
		r := &out.Entries[i]
		r.EntryID, r.MessageID = e.EntryID, e.MessageID
		if err, ok := failed[e.MessageGroupID]; ok && fifo {
			// A later message of the group stored ahead of the failed one, which the client
			// retries, would be delivered first: SQS enqueues a batch in the order sent.
			r.Err = err
			continue
		}
		msg := OutMessage{MessageID: e.MessageID, Body: []byte(e.Body), Properties: properties(e, d.now())}
		var key dedupKey
		if fifo {
			msg.SessionID = e.MessageGroupID
			msg.MessageID = brokerID(scope, e.MessageGroupID, e.MessageDeduplicationID)
			key = dedupKey{req.Name, msg.MessageID}
			now := d.now()
			d.mu.Lock()
			if seen, ok := d.dedups[key]; ok && seen.holds(now) {
				// Service Bus drops it; the message keeps the original id should it not.
				r.MessageID, r.Duplicate = seen.messageID, true
				msg.Properties[propID] = seen.messageID
			}
			d.mu.Unlock()
		} else if e.MessageGroupID != "" {
			msg.Properties[propGroup] = e.MessageGroupID // a fair queue's tenant, kept and returned
		}
		var err error
		if e.DelaySeconds > 0 {
			at := d.now().Add(time.Duration(e.DelaySeconds) * time.Second)
			if _, err = d.ns.Schedule(ctx, d.entity(req.Name), msg, at); err == nil {
				d.mu.Lock()
				if len(d.delayed[req.Name]) < 1024 {
					d.delayed[req.Name] = append(d.delayed[req.Name], at)
				}
				d.mu.Unlock()
			}
		} else {
			err = d.ns.Send(ctx, d.entity(req.Name), msg)
		}
		if err != nil {
			if errors.Is(err, ErrNotFound) && i == 0 {
				return drivers.SendMessagesResult{}, classify(err, "servicebus: send to "+req.Name)
			}
			if ctx.Err() != nil {
				return drivers.SendMessagesResult{}, ctx.Err()
			}
			r.MessageID, r.Duplicate = e.MessageID, false
			r.Err = asEntryErr(classify(err, "servicebus: send to "+req.Name))
			if fifo {
				failed[e.MessageGroupID] = r.Err
			}
			continue
		}
		if fifo && !r.Duplicate {
			d.mu.Lock()
			d.dedups[key] = dedupSeen{messageID: e.MessageID, at: d.now()}
			d.pruneDedupsLocked()
			d.mu.Unlock()
		}
	}
	return out, nil
}

// scopeKept is how long a FIFO queue's DeduplicationScope is reused before it is read
// again: a change made through another gateway instance applies there this much later.
const scopeKept = 10 * time.Second

type scopeSeen struct {
	scope string
	at    time.Time
}

// dedupScope reads a FIFO queue's DeduplicationScope, sparing most sends an admin call.
func (d *Driver) dedupScope(ctx context.Context, queue string) (string, error) {
	d.mu.Lock()
	s, ok := d.scopes[queue]
	d.mu.Unlock()
	if ok && d.now().Sub(s.at) < scopeKept {
		return s.scope, nil
	}
	q, _, err := d.get(ctx, queue)
	if err != nil {
		return "", err
	}
	d.mu.Lock()
	d.scopes[queue] = scopeSeen{q.Attributes.DeduplicationScope, d.now()}
	d.mu.Unlock()
	return q.Attributes.DeduplicationScope, nil
}

func (d *Driver) forgetScope(queue string) {
	d.mu.Lock()
	delete(d.scopes, queue)
	d.mu.Unlock()
}

// brokerID is the Service Bus MessageID of a FIFO message: what duplicate detection
// compares.
func brokerID(scope, group, dedup string) string {
	if scope != "messageGroup" {
		return dedup // at most 128 characters, as Service Bus allows
	}
	sum := sha256.Sum256([]byte(group + "\x00" + dedup))
	return "g." + hex.EncodeToString(sum[:])
}

func (d *Driver) pruneDedupsLocked() {
	if len(d.dedups) < 4096 {
		return
	}
	now := d.now()
	for k, v := range d.dedups {
		if !v.holds(now) {
			delete(d.dedups, k)
		}
	}
}

// attrJSON is one attribute in propAttrs; binary values travel as their own []byte
// property, so they take their size and not base64's.
type attrJSON struct {
	Type   string `json:"t"`
	String string `json:"s,omitempty"`
}

func properties(e drivers.SendEntry, now time.Time) map[string]any {
	p := map[string]any{propID: e.MessageID, propSent: now.UnixMilli()}
	if e.SenderID != "" {
		p[propSender] = e.SenderID
	}
	if e.MessageDeduplicationID != "" {
		p[propDedup] = e.MessageDeduplicationID
	}
	if len(e.Attributes) > 0 {
		p[propAttrs] = encodeAttributes(e.Attributes, p)
	}
	if len(e.SystemAttributes) > 0 {
		p[propSys] = encodeAttributes(e.SystemAttributes, nil)
	}
	return p
}

func encodeAttributes(attrs map[string]drivers.MessageAttribute, binary map[string]any) string {
	out := make(map[string]attrJSON, len(attrs))
	for name, a := range attrs {
		j := attrJSON{Type: a.DataType, String: a.StringValue}
		if a.BinaryValue != nil {
			if binary != nil {
				binary[propBinary+name] = a.BinaryValue
			} else {
				j.String = hex.EncodeToString(a.BinaryValue)
			}
		}
		out[name] = j
	}
	b, _ := json.Marshal(out)
	return string(b)
}

func decodeAttributes(s string, binary map[string]any) map[string]drivers.MessageAttribute {
	if s == "" {
		return nil
	}
	var in map[string]attrJSON
	if json.Unmarshal([]byte(s), &in) != nil {
		return nil
	}
	out := make(map[string]drivers.MessageAttribute, len(in))
	for name, j := range in {
		a := drivers.MessageAttribute{DataType: j.Type, StringValue: j.String}
		if isBinary(j.Type) {
			a.StringValue = ""
			if binary != nil {
				if b, ok := binary[propBinary+name].([]byte); ok {
					a.BinaryValue = b
				}
			} else if b, err := hex.DecodeString(j.String); err == nil {
				a.BinaryValue = b
			}
			if a.BinaryValue == nil {
				a.BinaryValue = []byte{}
			}
		}
		out[name] = a
	}
	return out
}

func isBinary(dataType string) bool {
	return dataType == "Binary" || len(dataType) > 7 && dataType[:7] == "Binary."
}
