package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/anysqs/anysqs/gateway/sqserr"
)

// Queue policies. A queue's Policy attribute (set directly, or edited by AddPermission
// and RemovePermission) grants other accounts actions on the queue. The gateway enforces
// the part of IAM's policy language that names accounts:
//
//   - Effect Allow or Deny; a Deny that matches wins over any Allow, and a call nothing
//     allows is denied.
//   - Principal "*", {"AWS": "*"}, {"AWS": "<account id>"} or
//     {"AWS": "arn:aws:iam::<account id>:root"}, one or a list. An IAM user's, role's or
//     session's ARN and {"Service": ...} are kept and match no caller: every key acts as
//     its account's root, and no AWS service calls a gateway.
//   - Action "*", "sqs:<action>" with * and ? wildcards, case-insensitive as in IAM; a
//     batch call is authorized as its single form (SendMessageBatch as SendMessage).
//   - Resource "*" or queue ARNs with * and ? wildcards, matched against the queue's ARN;
//     any other string is kept, as SQS keeps it, and matches no queue.
//
//   - Condition, with IAM's operators and semantics over the keys a request to the
//     gateway has (policycondition.go); other keys are absent.
//
// The owner account is always allowed, whatever its queue's policy says. Everything
// the gateway would not evaluate (NotPrincipal, NotAction, NotResource, Federated and
// CanonicalUser principals, other services' actions, unknown condition operators, values
// an operator cannot read) is refused when the policy is set, with InvalidAttributeValue,
// so that no statement is ever silently ignored.

// policyDoc is a policy document as the gateway evaluates it.
type policyDoc struct {
	Statements []policyStatement
}

type policyStatement struct {
	Deny       bool
	Principals []string // account ids; "*" for anyone
	Actions    []string // lower-case patterns: "*" or "sqs:send*"
	Resources  []string // patterns: "*" or ARNs
	Conditions []condition
}

// policyKeys are the members a policy document may have.
var policyKeys = map[string]bool{"Version": true, "Id": true, "Statement": true}

// statementKeys are the members a statement may have; the others (NotPrincipal,
// NotAction, NotResource) are refused by name.
var statementKeys = map[string]bool{"Sid": true, "Effect": true, "Principal": true, "Action": true, "Resource": true, "Condition": true}

// CheckQueuePolicy refuses a Policy the gateway would not enforce as written.
func CheckQueuePolicy(doc string) error {
	if doc == "" {
		return nil
	}
	if _, err := parsePolicy(doc); err != nil {
		return sqserr.New(sqserr.InvalidAttributeValue, "Invalid value for the parameter Policy. Reason: %v", err)
	}
	return nil
}

// AllowedByPolicy reports whether the policy doc lets account perform action (an SQS
// action name) on the queue whose ARN is arn, in request context rc (for the statements'
// conditions). A policy that does not parse allows nothing.
func AllowedByPolicy(doc, account, action, arn string, rc RequestContext) bool {
	if doc == "" {
		return false
	}
	p, err := parsePolicy(doc)
	if err != nil {
		return false
	}
	action = "sqs:" + strings.ToLower(action)
	allowed := false
	for _, st := range p.Statements {
		if !st.matches(account, action, arn) || !conditionsHold(st.Conditions, rc) {
			continue
		}
		if st.Deny {
			return false
		}
		allowed = true
	}
	return allowed
}

func (st policyStatement) matches(account, action, arn string) bool {
	return anyMatch(st.Principals, func(p string) bool { return p == "*" || p == account }) &&
		anyMatch(st.Actions, func(a string) bool { return globMatch(a, action) }) &&
		anyMatch(st.Resources, func(r string) bool { return globMatch(r, arn) })
}

func anyMatch(list []string, f func(string) bool) bool {
	for _, v := range list {
		if f(v) {
			return true
		}
	}
	return false
}

// globMatch matches IAM's wildcards: * any run of characters, ? any one character.
func globMatch(pattern, s string) bool {
	if pattern == "*" {
		return true
	}
	// path.Match's other metacharacters ([, \) mean nothing in IAM: escape them. Queue
	// ARNs and action names hold no "/", where path.Match's * would stop.
	var b strings.Builder
	for _, r := range pattern {
		switch r {
		case '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	ok, err := path.Match(b.String(), s)
	return err == nil && ok
}

func parsePolicy(doc string) (policyDoc, error) {
	var raw map[string]json.RawMessage
	if err := strictUnmarshal([]byte(doc), &raw); err != nil {
		return policyDoc{}, fmt.Errorf("the document is not a JSON object")
	}
	for k := range raw {
		if !policyKeys[k] {
			return policyDoc{}, fmt.Errorf("the policy member %s is not supported", k)
		}
	}
	stmts, err := oneOrList[map[string]json.RawMessage](raw["Statement"], "Statement")
	if err != nil {
		return policyDoc{}, err
	}
	// Under Version 2012-10-17, ${...} in a value is a policy variable; before it, text.
	var version string
	_ = json.Unmarshal(raw["Version"], &version)
	var p policyDoc
	for i, s := range stmts {
		st, err := parseStatement(s, version == "2012-10-17")
		if err != nil {
			return policyDoc{}, fmt.Errorf("statement %d: %v", i+1, err)
		}
		p.Statements = append(p.Statements, st)
	}
	return p, nil
}

func parseStatement(s map[string]json.RawMessage, variables bool) (policyStatement, error) {
	var st policyStatement
	for k := range s {
		if !statementKeys[k] {
			return st, fmt.Errorf("%s is not evaluated by this gateway, so it cannot be set", k)
		}
	}
	var effect string
	if json.Unmarshal(s["Effect"], &effect) != nil || (effect != "Allow" && effect != "Deny") {
		return st, fmt.Errorf("the Effect must be Allow or Deny")
	}
	st.Deny = effect == "Deny"
	var err error
	if st.Principals, err = parsePrincipal(s["Principal"]); err != nil {
		return st, err
	}
	actions, err := oneOrList[string](s["Action"], "Action")
	if err != nil {
		return st, err
	}
	for _, a := range actions {
		a = strings.ToLower(a)
		if a != "*" && !strings.HasPrefix(a, "sqs:") {
			return st, fmt.Errorf("action %s is not an SQS action", a)
		}
		st.Actions = append(st.Actions, a)
	}
	if st.Resources, err = oneOrList[string](s["Resource"], "Resource"); err != nil {
		return st, err
	}
	// SQS stores a Resource that is not an ARN (a template placeholder left unfilled,
	// say) and it matches no queue; so here: kept in the document, left out of matching.
	arns := st.Resources[:0]
	for _, r := range st.Resources {
		if r == "*" || strings.HasPrefix(r, "arn:") {
			arns = append(arns, r)
		}
	}
	st.Resources = arns
	if c, ok := s["Condition"]; ok {
		if st.Conditions, err = parseCondition(c, variables); err != nil {
			return st, err
		}
	}
	return st, nil
}

// parsePrincipal returns the account ids (or "*") of a Principal member.
func parsePrincipal(raw json.RawMessage) ([]string, error) {
	if raw == nil {
		return nil, fmt.Errorf("the Principal is missing")
	}
	var star string
	if json.Unmarshal(raw, &star) == nil {
		if star != "*" {
			return nil, fmt.Errorf(`the Principal must be "*" or {"AWS": ...}`)
		}
		return []string{"*"}, nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil, fmt.Errorf("the Principal is neither a string nor an object")
	}
	var out []string
	services, identities := false, false
	for k, v := range m {
		if k == "Service" {
			// An AWS service (SNS delivering to a subscribed queue, say) never calls a
			// gateway: the statement is kept and applies to no caller, as it would to
			// every call that does not come from that service.
			names, err := oneOrList[string](v, "Principal Service")
			if err != nil {
				return nil, err
			}
			for _, n := range names {
				if !strings.HasSuffix(n, ".amazonaws.com") {
					return nil, fmt.Errorf("service principal %q is not an AWS service name (<service>.amazonaws.com)", n)
				}
			}
			services = true
			continue
		}
		if k != "AWS" {
			return nil, fmt.Errorf("%s principals are not evaluated by this gateway (AWS and Service only)", k)
		}
		ids, err := oneOrList[string](v, "Principal AWS")
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			if acct, ok := principalAccount(id); ok {
				out = append(out, acct)
				continue
			}
			// SQS takes an IAM user's or role's ARN. Every key of the gateway acts as
			// its account's root, so no caller is such a principal: the statement is
			// kept and this entry matches no caller, for Allow and Deny alike.
			if !iamIdentity(id) {
				return nil, fmt.Errorf("principal %s is neither an account (\"*\", an account id or arn:aws:iam::<account id>:root) nor an IAM user, role or session ARN", id)
			}
			identities = true
		}
	}
	if len(out) == 0 && !services && !identities {
		return nil, fmt.Errorf("the Principal names no account")
	}
	return out, nil
}

func principalAccount(p string) (string, bool) {
	if p == "*" || IsAccountID(p) {
		return p, true
	}
	if a, ok := strings.CutPrefix(p, "arn:aws:iam::"); ok {
		if a, ok := strings.CutSuffix(a, ":root"); ok && IsAccountID(a) {
			return a, true
		}
	}
	return "", false
}

// iamIdentity says whether p is the ARN of an IAM user, role, group or other identity
// (arn:aws:iam::<account id>:<type>/<name>) or of an STS session
// (arn:aws:sts::<account id>:assumed-role/<role>/<session>).
func iamIdentity(p string) bool {
	parts, ok := arnParts(p)
	return ok && parts[1] == "aws" && (parts[2] == "iam" || parts[2] == "sts") && parts[3] == "" &&
		IsAccountID(parts[4]) && strings.Contains(parts[5], "/")
}

// oneOrList decodes a member that IAM lets be one value or a list of them.
func oneOrList[T any](raw json.RawMessage, name string) ([]T, error) {
	if raw == nil {
		return nil, fmt.Errorf("%s is missing", name)
	}
	var one T
	if json.Unmarshal(raw, &one) == nil {
		return []T{one}, nil
	}
	var list []T
	if json.Unmarshal(raw, &list) != nil {
		return nil, fmt.Errorf("%s has the wrong type", name)
	}
	if len(list) == 0 && name != "Statement" {
		return nil, fmt.Errorf("%s is empty", name)
	}
	return list, nil
}

// strictUnmarshal decodes a JSON object, refusing trailing data.
func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data")
	}
	return nil
}

// IsAccountID says whether s is an AWS account ID: 12 digits.
func IsAccountID(s string) bool {
	return len(s) == 12 && strings.Trim(s, "0123456789") == ""
}
