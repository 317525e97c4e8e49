// Package declare reads queue declarations (a configuration's queues: list) and brings a
// set of SQS queues into line with them: the gateway at start-up, and anysqs apply
// against a running gateway or AWS SQS.
//
// # Declarations
//
//	queues:
//	  - name: orders.fifo            # a .fifo name makes FifoQueue true
//	    account: "111122223333"      # optional: the queue's account (default: the gateway's)
//	    attributes:                  # SQS's names and values, as CreateQueue takes them
//	      VisibilityTimeout: 60
//	      RedrivePolicy: {deadLetterTargetArn: orders-dlq.fifo, maxReceiveCount: 5}
//	      Policy: {Version: "2012-10-17", Statement: [...]}
//	    tags: {team: payments}
//	  - name: orders-dlq.fifo
//
// Values are scalars, except Policy, RedrivePolicy and RedriveAllowPolicy, which may be
// SQS's JSON in a string or the same object written as YAML. A RedrivePolicy's
// deadLetterTargetArn may name the dead-letter queue by its name (same account) instead
// of its ARN.
//
// # What applying does
//
// Queues are created dead-letter queues first, whatever the order in the file. For a
// queue that exists, each declared attribute and tag whose value differs is set;
// attributes and tags the declaration does not name are left as they are, and no queue
// the declarations do not list is ever deleted. Applying is idempotent, and several
// appliers racing on the same storage converge: CreateQueue with the same attributes
// succeeds on an existing queue, and a queue created by another applier meanwhile is
// compared again.
package declare

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/aws/smithy-go"
	"gopkg.in/yaml.v3"

	"github.com/anysqs/anysqs/drivers/sqsrule"
	"github.com/anysqs/anysqs/gateway/queueattr"
	"github.com/anysqs/anysqs/gateway/sqserr"
)

// Queue is one declared queue.
type Queue struct {
	Name string
	// Account is the 12-digit account the queue belongs to; "" for the target's own.
	Account string
	// Attributes are as CreateQueue takes them. A RedrivePolicy that names its
	// dead-letter queue by name is resolved to the ARN when applied (DeadLetter).
	Attributes map[string]string
	Tags       map[string]string
	// DeadLetter is the name of the dead-letter queue RedrivePolicy names by name; ""
	// when it gives an ARN or there is none.
	DeadLetter string

	At     Pos            // the entry
	attrAt map[string]Pos // each attribute
	tagAt  map[string]Pos // each tag
}

// Pos is a place in a declarations file.
type Pos struct {
	File string
	Line int
}

// Error is a declaration that cannot be applied, located in its file.
type Error struct {
	Pos
	Queue     string // "" before the entry's name is known
	Attribute string // "" when the fault is not one attribute's
	Tag       string
	Msg       string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
		}
		b.WriteString(": ")
	}
	if e.Queue != "" {
		fmt.Fprintf(&b, "queue %s: ", e.Queue)
	}
	if e.Attribute != "" {
		fmt.Fprintf(&b, "attribute %s: ", e.Attribute)
	}
	if e.Tag != "" {
		fmt.Fprintf(&b, "tag %s: ", e.Tag)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// errAt is an error about q, its attribute attr ("" for the queue as a whole).
func (q *Queue) errAt(attr, msg string) *Error {
	e := &Error{Pos: q.At, Queue: q.Name, Attribute: attr, Msg: msg}
	if p, ok := q.attrAt[attr]; ok {
		e.Pos = p
	}
	return e
}

// Key is "ACCOUNT/NAME", the queue's identity among declarations.
func (q *Queue) Key() string { return q.Account + "/" + q.Name }

// jsonAttributes may be written as YAML objects; they are stored as SQS's JSON.
var jsonAttributes = map[string]bool{
	queueattr.Policy:             true,
	queueattr.RedrivePolicy:      true,
	queueattr.RedriveAllowPolicy: true,
}

// ParseFile reads the declarations of the YAML file at path: its queues: list, and the
// file its queues_file: names (relative to path's directory). Other keys are left to
// whoever reads the rest of the file (a gateway configuration may be given).
func ParseFile(path string) ([]Queue, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %s", path, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, &Error{Pos: Pos{path, root.Line}, Msg: "want a mapping with a queues: list"}
	}
	var out []Queue
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch k.Value {
		case "queues":
			qs, err := Parse(path, v)
			if err != nil {
				return nil, err
			}
			out = append(out, qs...)
		case "queues_file":
			if v.Kind != yaml.ScalarNode || v.Value == "" {
				return nil, &Error{Pos: Pos{path, v.Line}, Msg: "queues_file: want a file name"}
			}
			qs, err := ParseFile(Resolve(path, v.Value))
			if err != nil {
				return nil, err
			}
			out = append(out, qs...)
		}
	}
	return out, Check(out)
}

// Resolve makes name, as written in the file at path, relative to that file's directory.
func Resolve(path, name string) string {
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(filepath.Dir(path), name)
}

// Parse reads a queues: list (n) of the file at path. Each entry is checked on its own:
// its keys, its name, its account, its attributes' names and values as SQS checks them,
// its tags. Check then checks the entries together.
func Parse(path string, n *yaml.Node) ([]Queue, error) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, &Error{Pos: Pos{path, n.Line}, Msg: "queues: want a list of queues, each with a name"}
	}
	out := make([]Queue, 0, len(n.Content))
	for _, item := range n.Content {
		q, err := parseEntry(path, item)
		if err != nil {
			return nil, err
		}
		out = append(out, q)
	}
	return out, nil
}

func parseEntry(path string, n *yaml.Node) (Queue, error) {
	q := Queue{At: Pos{path, n.Line}, Attributes: map[string]string{}, Tags: map[string]string{},
		attrAt: map[string]Pos{}, tagAt: map[string]Pos{}}
	if n.Kind != yaml.MappingNode {
		return q, &Error{Pos: q.At, Msg: "queues: each entry is a mapping with a name: (and attributes:, tags:, account:)"}
	}
	var attrs, tags *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "name", "account":
			if v.Kind != yaml.ScalarNode {
				return q, &Error{Pos: Pos{path, v.Line}, Msg: k.Value + ": want a single value"}
			}
			if k.Value == "name" {
				q.Name = v.Value
			} else {
				q.Account = v.Value
			}
		case "attributes":
			attrs = v
		case "tags":
			tags = v
		default:
			return q, &Error{Pos: Pos{path, k.Line}, Queue: q.Name,
				Msg: fmt.Sprintf("unknown key %s; a queue has: name, account, attributes, tags", k.Value)}
		}
	}
	if q.Name == "" {
		return q, &Error{Pos: q.At, Msg: "the entry has no name"}
	}
	if err := queueattr.ValidateName(q.Name); err != nil {
		return q, &Error{Pos: q.At, Queue: q.Name, Msg: "name: " + sqsMessage(err)}
	}
	if q.Account != "" && !isAccountID(q.Account) {
		return q, &Error{Pos: q.At, Queue: q.Name, Msg: fmt.Sprintf("account: %q is not 12 digits", q.Account)}
	}
	if attrs != nil {
		if err := q.parseAttributes(path, attrs); err != nil {
			return q, err
		}
	}
	if tags != nil {
		if err := q.parseTags(path, tags); err != nil {
			return q, err
		}
	}
	return q, q.validate()
}

func (q *Queue) parseAttributes(path string, n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return &Error{Pos: Pos{path, n.Line}, Queue: q.Name, Msg: "attributes: want a mapping of SQS attribute names to values"}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := k.Value
		q.attrAt[name] = Pos{path, k.Line}
		if _, dup := q.Attributes[name]; dup {
			return q.errAt(name, "given twice")
		}
		if !queueattr.Settable(name) {
			return q.errAt(name, unknownAttribute(name))
		}
		val, err := scalarOrJSON(name, v)
		if err != nil {
			return q.errAt(name, err.Error())
		}
		q.Attributes[name] = val
	}
	return nil
}

func (q *Queue) parseTags(path string, n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return &Error{Pos: Pos{path, n.Line}, Queue: q.Name, Msg: "tags: want a mapping of tag keys to values"}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		q.tagAt[k.Value] = Pos{path, k.Line}
		if v.Kind != yaml.ScalarNode {
			return &Error{Pos: Pos{path, k.Line}, Queue: q.Name, Tag: k.Value, Msg: "want a single value"}
		}
		q.Tags[k.Value] = v.Value
	}
	return nil
}

// scalarOrJSON is the attribute's value as SQS takes it: a scalar as written, and for
// the JSON attributes a mapping as its JSON.
func scalarOrJSON(name string, v *yaml.Node) (string, error) {
	if v.Kind == yaml.ScalarNode {
		if v.Tag == "!!null" {
			return "", nil
		}
		return v.Value, nil
	}
	if !jsonAttributes[name] || v.Kind != yaml.MappingNode {
		return "", fmt.Errorf("want a single value, got %s", kindName(v))
	}
	var obj any
	if err := v.Decode(&obj); err != nil {
		return "", err
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return "", fmt.Errorf("cannot be written as JSON: %v", err)
	}
	return string(b), nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping (only Policy, RedrivePolicy and RedriveAllowPolicy may be written as YAML objects)"
	case yaml.SequenceNode:
		return "a list"
	}
	return "a single value"
}

// validate checks the entry's attributes as SQS checks CreateQueue's: each attribute on
// its own first, so the error names the one at fault, then all of them together.
func (q *Queue) validate() error {
	if queueattr.IsFIFOName(q.Name) {
		if v, ok := q.Attributes[queueattr.FifoQueue]; ok && !strings.EqualFold(v, "true") {
			return q.errAt(queueattr.FifoQueue, fmt.Sprintf("%q, but a queue whose name ends in .fifo is a FIFO queue", v))
		}
		q.Attributes[queueattr.FifoQueue] = "true"
	} else if _, ok := q.Attributes[queueattr.FifoQueue]; ok {
		return q.errAt(queueattr.FifoQueue, "a FIFO queue's name ends in .fifo")
	}
	if err := q.resolveDeadLetter(); err != nil {
		return err
	}
	probe := q.withPlaceholderARN()
	fifo := map[string]string{}
	if v, ok := probe[queueattr.FifoQueue]; ok {
		fifo[queueattr.FifoQueue] = v
	}
	for _, name := range sortedKeys(probe) {
		one := map[string]string{name: probe[name]}
		for k, v := range fifo {
			one[k] = v
		}
		if _, err := queueattr.ForCreate(q.Name, one, anyARN); err != nil {
			return q.errAt(name, sqsMessage(err))
		}
	}
	if _, err := queueattr.ForCreate(q.Name, probe, anyARN); err != nil {
		return q.errAt("", sqsMessage(err))
	}
	for k, v := range q.Tags {
		if err := checkTag(k, v); err != "" {
			p := q.tagAt[k]
			return &Error{Pos: p, Queue: q.Name, Tag: k, Msg: err}
		}
	}
	if len(q.Tags) > maxTags {
		return q.errAt("", fmt.Sprintf("%d tags; a queue has at most %d", len(q.Tags), maxTags))
	}
	return nil
}

// resolveDeadLetter reads the RedrivePolicy's target: a name, or an ARN as SQS takes it.
func (q *Queue) resolveDeadLetter() error {
	v, ok := q.Attributes[queueattr.RedrivePolicy]
	if !ok || v == "" {
		return nil
	}
	var rp map[string]any
	if err := json.Unmarshal([]byte(v), &rp); err != nil {
		return q.errAt(queueattr.RedrivePolicy, "not a JSON object: "+err.Error())
	}
	target, _ := rp["deadLetterTargetArn"].(string)
	if target == "" {
		return q.errAt(queueattr.RedrivePolicy, "deadLetterTargetArn is missing: give the dead-letter queue's name or ARN")
	}
	if !strings.HasPrefix(target, "arn:") {
		if err := queueattr.ValidateName(target); err != nil {
			return q.errAt(queueattr.RedrivePolicy, fmt.Sprintf("deadLetterTargetArn %q is neither an ARN nor a queue name", target))
		}
		q.DeadLetter = target
	} else if p := strings.Split(target, ":"); len(p) == 6 && p[2] == "sqs" && (q.Account == "" || p[4] == q.Account) {
		// An ARN of the queue's own account names a queue the file may declare too.
		q.DeadLetter = p[5]
	}
	if q.DeadLetter == q.Name {
		return q.errAt(queueattr.RedrivePolicy, "a queue cannot be its own dead-letter queue")
	}
	return nil
}

// withPlaceholderARN is the attributes with a dead-letter queue named by name given an
// ARN, for the checks that precede knowing the real one.
func (q *Queue) withPlaceholderARN() map[string]string {
	return q.resolved(func(name string) string { return "arn:aws:sqs:us-east-1:000000000000:" + name })
}

// resolved is the attributes with the dead-letter queue's name replaced by arnOf(name).
func (q *Queue) resolved(arnOf func(name string) string) map[string]string {
	out := make(map[string]string, len(q.Attributes))
	for k, v := range q.Attributes {
		out[k] = v
	}
	v, ok := q.Attributes[queueattr.RedrivePolicy]
	if !ok || q.DeadLetter == "" {
		return out
	}
	var rp map[string]any
	if json.Unmarshal([]byte(v), &rp) != nil {
		return out
	}
	if t, _ := rp["deadLetterTargetArn"].(string); !strings.HasPrefix(t, "arn:") {
		rp["deadLetterTargetArn"] = arnOf(q.DeadLetter)
		b, _ := json.Marshal(rp)
		out[queueattr.RedrivePolicy] = string(b)
	}
	return out
}

// Check checks the declarations together: each queue declared once, and dead-letter
// queues that do not make a cycle. A dead-letter queue that is not declared must exist
// where the declarations are applied; Plan checks that.
func Check(qs []Queue) error {
	seen := map[string]*Queue{}
	for i := range qs {
		q := &qs[i]
		if first, dup := seen[q.Key()]; dup {
			return &Error{Pos: q.At, Queue: q.Name, Msg: fmt.Sprintf("declared twice (first at %s:%d)", first.At.File, first.At.Line)}
		}
		seen[q.Key()] = q
	}
	_, err := order(qs)
	return err
}

// order returns the indexes of qs, each queue after the dead-letter queue it names when
// that is declared too, otherwise in file order.
func order(qs []Queue) ([]int, error) {
	index := map[string]int{}
	for i := range qs {
		index[qs[i].Key()] = i
	}
	const (
		unvisited = iota
		visiting
		done
	)
	state := make([]int, len(qs))
	out := make([]int, 0, len(qs))
	var visit func(i int, path []string) error
	visit = func(i int, path []string) error {
		switch state[i] {
		case done:
			return nil
		case visiting:
			q := &qs[i]
			return q.errAt(queueattr.RedrivePolicy, "dead-letter queues make a cycle: "+strings.Join(append(path, q.Name), " -> "))
		}
		state[i] = visiting
		q := &qs[i]
		if q.DeadLetter != "" && q.DeadLetter != q.Name {
			if j, ok := index[q.Account+"/"+q.DeadLetter]; ok {
				if err := visit(j, append(path, q.Name)); err != nil {
					return err
				}
			}
		}
		state[i] = done
		out = append(out, i)
		return nil
	}
	for i := range qs {
		if err := visit(i, nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// anyARN reads an SQS queue ARN of any region and account as "ACCOUNT:NAME": enough to
// tell queues apart when comparing attributes, whatever the target's region.
func anyARN(arn string) (string, bool) {
	p := strings.Split(arn, ":")
	if len(p) != 6 || p[0] != "arn" || p[2] != "sqs" || p[5] == "" {
		return "", false
	}
	return p[4] + ":" + p[5], true
}

// sqsMessage is what an SQS error says: the gateway's own validation's message, or the
// code and message of an error a target answered.
func sqsMessage(err error) string {
	var se *sqserr.Error
	if errors.As(err, &se) {
		return se.Message
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode() + ": " + ae.ErrorMessage()
	}
	return err.Error()
}

func unknownAttribute(name string) string {
	for _, r := range queueattr.Readable {
		if r == name {
			return "read-only: SQS sets it, a queue cannot be created with it"
		}
	}
	known := make([]string, 0, 16)
	for _, r := range queueattr.Readable {
		if queueattr.Settable(r) {
			known = append(known, r)
		}
	}
	sort.Strings(known)
	return "SQS has no such queue attribute; CreateQueue takes: " + strings.Join(known, ", ")
}

const maxTags = sqsrule.MaxQueueTags

// checkTag applies SQS's tag rules; "" when the tag is valid.
func checkTag(k, v string) string {
	switch {
	case k == "" || len(k) > 128:
		return "a tag key is 1 to 128 characters"
	case strings.HasPrefix(strings.ToLower(k), "aws:"):
		return "the aws: prefix is reserved"
	case len(v) > 256:
		return "a tag value is at most 256 characters"
	}
	return ""
}

func isAccountID(s string) bool {
	if len(s) != 12 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
