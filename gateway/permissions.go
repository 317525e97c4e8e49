package gateway

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/gateway/queueattr"
	"github.com/anysqs/anysqs/gateway/sqserr"
)

// AddPermission and RemovePermission edit the queue's Policy attribute as SQS does: one
// statement per label (its Sid), Allow, the accounts' root principals, SQS:<action> and
// the queue's ARN. The policy is stored like any Policy attribute, through the same checks
// (the attribute.Policy declaration, policy.CheckQueuePolicy), and the gateway enforces it.

type addPermissionInput struct {
	QueueUrl      string   `json:"QueueUrl"`
	Label         *string  `json:"Label"`
	AWSAccountIds []string `json:"AWSAccountIds"`
	Actions       []string `json:"Actions"`
}

type removePermissionInput struct {
	QueueUrl string  `json:"QueueUrl"`
	Label    *string `json:"Label"`
}

// queuePolicy is the subset of an IAM policy document AddPermission writes; statements
// it did not write are kept as they are.
type queuePolicy struct {
	Version   string            `json:"Version"`
	ID        string            `json:"Id,omitempty"`
	Statement []json.RawMessage `json:"Statement"`
}

type permissionStatement struct {
	Sid       string         `json:"Sid"`
	Effect    string         `json:"Effect"`
	Principal map[string]any `json:"Principal"`
	Action    any            `json:"Action"`
	Resource  string         `json:"Resource"`
}

var validLabel = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)

// permissionActions are the actions AddPermission may grant, as SQS lists them.
var permissionActions = []string{"*", "SendMessage", "ReceiveMessage", "DeleteMessage",
	"ChangeMessageVisibility", "GetQueueAttributes", "GetQueueUrl", "ListDeadLetterSourceQueues",
	"PurgeQueue", "ListQueueTags"}

func (s *Server) addPermission(ctx context.Context, c *call) (any, error) {
	var in addPermissionInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	q, err := s.getQueue(ctx, c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	if in.Label == nil {
		return nil, sqserr.New(sqserr.MissingParameter, "The request must contain the parameter Label.")
	}
	label := *in.Label
	if !validLabel.MatchString(label) {
		return nil, invalidLabel(label, "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length.")
	}
	if len(in.AWSAccountIds) == 0 {
		return nil, sqserr.New(sqserr.MissingParameter, "The request must contain the parameter AWSAccountIds.")
	}
	if len(in.Actions) == 0 {
		return nil, sqserr.New(sqserr.MissingParameter, "The request must contain the parameter Actions.")
	}
	principals := make([]string, 0, len(in.AWSAccountIds))
	for _, a := range in.AWSAccountIds {
		if len(a) != 12 || strings.Trim(a, "0123456789") != "" {
			return nil, sqserr.New(sqserr.InvalidParameterValue, "Value %s for parameter AWSAccountIds is invalid. Reason: An AWS account id is 12 digits.", a)
		}
		principals = append(principals, "arn:aws:iam::"+a+":root")
	}
	actions := make([]string, 0, len(in.Actions))
	for _, a := range in.Actions {
		if !slices.Contains(permissionActions, a) {
			return nil, sqserr.New(sqserr.InvalidParameterValue, "Value SQS:%s for parameter ActionName is invalid. Reason: Please refer to the appropriate WSDL for a list of valid actions.", a)
		}
		actions = append(actions, "SQS:"+a)
	}
	pol, err := parseQueuePolicy(q.Attributes.Policy)
	if err != nil {
		return nil, sqserr.New(sqserr.InvalidParameterValue, "The queue's Policy attribute is not a policy document AddPermission can edit: %v", err)
	}
	if pol.has(label) {
		return nil, invalidLabel(label, "Already exists.")
	}
	arn := s.arn(q.Name)
	if pol.Version == "" {
		pol.Version, pol.ID = "2008-10-17", arn+"/SQSDefaultPolicy"
	}
	st, _ := json.Marshal(permissionStatement{Sid: label, Effect: "Allow",
		Principal: map[string]any{"AWS": oneOrMany(principals)}, Action: oneOrMany(actions), Resource: arn})
	pol.Statement = append(pol.Statement, st)
	return s.storePolicy(ctx, c, q, pol)
}

func (s *Server) removePermission(ctx context.Context, c *call) (any, error) {
	var in removePermissionInput
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	q, err := s.getQueue(ctx, c, in.QueueUrl)
	if err != nil {
		return nil, err
	}
	if in.Label == nil {
		return nil, sqserr.New(sqserr.MissingParameter, "The request must contain the parameter Label.")
	}
	pol, err := parseQueuePolicy(q.Attributes.Policy)
	if err != nil || !pol.has(*in.Label) {
		return nil, invalidLabel(*in.Label, "can't find label.")
	}
	pol.Statement = slices.DeleteFunc(pol.Statement, func(raw json.RawMessage) bool { return sidOf(raw) == *in.Label })
	return s.storePolicy(ctx, c, q, pol)
}

func invalidLabel(label, reason string) error {
	return sqserr.New(sqserr.InvalidParameterValue, "Value %s for parameter Label is invalid. Reason: %s", label, reason)
}

// storePolicy writes pol as the queue's Policy attribute through the same checks as
// SetQueueAttributes (attribute.Policy among them); a policy left without statements is
// removed.
func (s *Server) storePolicy(ctx context.Context, c *call, q drivers.Queue, pol queuePolicy) (any, error) {
	doc := ""
	if len(pol.Statement) > 0 {
		b, err := json.Marshal(pol)
		if err != nil {
			return nil, sqserr.New(sqserr.InternalError, "encoding the policy of queue %s: %v", q.Name, err)
		}
		doc = string(b)
	}
	return s.changeAttributes(ctx, c, q, map[string]string{queueattr.Policy: doc})
}

func parseQueuePolicy(doc string) (queuePolicy, error) {
	var p queuePolicy
	if strings.TrimSpace(doc) == "" {
		return p, nil
	}
	if err := json.Unmarshal([]byte(doc), &p); err != nil {
		return p, err
	}
	return p, nil
}

func (p queuePolicy) has(label string) bool {
	return slices.ContainsFunc(p.Statement, func(raw json.RawMessage) bool { return sidOf(raw) == label })
}

func sidOf(raw json.RawMessage) string {
	var st struct{ Sid string }
	_ = json.Unmarshal(raw, &st)
	return st.Sid
}

// oneOrMany is v's only element, or v: SQS writes a single principal or action as a string.
func oneOrMany(v []string) any {
	if len(v) == 1 {
		return v[0]
	}
	return v
}
