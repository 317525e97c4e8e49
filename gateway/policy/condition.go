package policy

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Queue policy conditions. A statement's Condition block is evaluated with IAM's
// semantics (the IAM User Guide's "IAM JSON policy elements: Condition operators"):
//
//   - Every operator in the block, and every key under an operator, must hold (AND);
//     the values listed for one key are alternatives (OR), and for a negated operator
//     (StringNotEquals, ArnNotLike, NotIpAddress, ...) none of them may match.
//   - Key names are case-insensitive; values are compared as the operator says.
//   - A key absent from the request makes the condition false, except for negated
//     operators (true), the ...IfExists forms (true) and Null, which tests presence.
//   - ForAllValues: and ForAnyValue: apply the operator to each value of the request's
//     key. Every key the gateway knows is single-valued, so both test the one value;
//     on an absent key ForAllValues is true and ForAnyValue false.
//
// The request context holds the keys in requestKeys; every other key (aws:SourceArn,
// aws:SourceAccount, aws:SourceVpce, aws:username, tags, ...) is absent, since no
// request reaching the gateway carries it. An operator the gateway does not know, a value
// its operator cannot read, or a policy variable (${...}) refuses the policy when it is
// set: nothing is stored that would be evaluated otherwise than as written.

// RequestContext maps the lower-case names of the condition keys a request has to
// their values. A key not in the map is absent.
type RequestContext map[string]string

// requestKeys are the condition keys the gateway puts in a request's context, in the
// case IAM documents them.
var requestKeys = []string{
	"aws:CurrentTime", "aws:EpochTime", "aws:PrincipalAccount", "aws:PrincipalArn",
	"aws:PrincipalIsAWSService", "aws:PrincipalType", "aws:Referer", "aws:RequestedRegion",
	"aws:SecureTransport", "aws:SourceIp", "aws:UserAgent", "aws:userid", "aws:ViaAWSService",
}

// RequestFacts is what a request tells about itself, kept on the call for the
// conditions of another account's queue policy.
type RequestFacts struct {
	RemoteAddr string // http.Request.RemoteAddr: the connection's peer, not X-Forwarded-For
	Secure     bool   // the request came over TLS
	UserAgent  string
	Referer    string
}

// NewRequestContext is the context of a request by account (whose keys act as the
// account's root user) at now, in region.
func NewRequestContext(f RequestFacts, account, region string, now time.Time) RequestContext {
	now = now.UTC().Truncate(time.Second)
	rc := RequestContext{
		"aws:currenttime":           now.Format(time.RFC3339),
		"aws:epochtime":             strconv.FormatInt(now.Unix(), 10),
		"aws:principalaccount":      account,
		"aws:principalarn":          "arn:aws:iam::" + account + ":root",
		"aws:principalisawsservice": "false",
		"aws:principaltype":         "Account",
		"aws:requestedregion":       region,
		"aws:securetransport":       strconv.FormatBool(f.Secure),
		"aws:userid":                account,
		"aws:viaawsservice":         "false",
	}
	if ip, ok := remoteIP(f.RemoteAddr); ok {
		rc["aws:sourceip"] = ip
	}
	if f.UserAgent != "" {
		rc["aws:useragent"] = f.UserAgent
	}
	if f.Referer != "" {
		rc["aws:referer"] = f.Referer
	}
	return rc
}

// remoteIP is the address of a RemoteAddr ("host:port"), IPv4-mapped IPv6 as IPv4.
func remoteIP(remote string) (string, bool) {
	if ap, err := netip.ParseAddrPort(remote); err == nil {
		return ap.Addr().Unmap().WithZone("").String(), true
	}
	if a, err := netip.ParseAddr(remote); err == nil {
		return a.Unmap().WithZone("").String(), true
	}
	return "", false
}

// condition is one key under one operator of a Condition block.
type condition struct {
	op       string // as written, for messages
	kind     *opKind
	ifExists bool
	set      string // "", "ForAllValues" or "ForAnyValue"
	key      string // lower case
	values   []string
}

// opKind is a family of operators that read values alike.
type opKind struct {
	negated bool
	null    bool // Null: tests whether the key is present
	// check says why a policy value cannot be read ("" when it can).
	check func(v string) string
	// match reports whether the request's value matches policy value p (checked).
	match func(p, v string) bool
}

// conditionOperators are IAM's operators without their IfExists suffix and set
// qualifier, by lower-case name.
var conditionOperators = map[string]*opKind{}

func init() {
	add := func(name string, negated bool, check func(string) string, match func(p, v string) bool) {
		conditionOperators[strings.ToLower(name)] = &opKind{negated: negated, check: check, match: match}
	}
	anyString := func(string) string { return "" }
	for _, neg := range []bool{false, true} {
		not := map[bool]string{false: "", true: "Not"}[neg]
		add("String"+not+"Equals", neg, anyString, func(p, v string) bool { return p == v })
		add("String"+not+"EqualsIgnoreCase", neg, anyString, strings.EqualFold)
		add("String"+not+"Like", neg, anyString, wildcardMatch)
		add("Arn"+not+"Equals", neg, checkARN, arnMatch)
		add("Arn"+not+"Like", neg, checkARN, arnMatch)
		add("Numeric"+not+"Equals", neg, checkNumber, numericCompare(func(c int) bool { return c == 0 }))
		add("Date"+not+"Equals", neg, checkDate, dateCompare(func(c int) bool { return c == 0 }))
	}
	add("NotIpAddress", true, checkIP, ipMatch)
	add("IpAddress", false, checkIP, ipMatch)
	for name, f := range map[string]func(int) bool{
		"LessThan": func(c int) bool { return c < 0 }, "LessThanEquals": func(c int) bool { return c <= 0 },
		"GreaterThan": func(c int) bool { return c > 0 }, "GreaterThanEquals": func(c int) bool { return c >= 0 },
	} {
		add("Numeric"+name, false, checkNumber, numericCompare(f))
		add("Date"+name, false, checkDate, dateCompare(f))
	}
	add("Bool", false, checkBool, strings.EqualFold)
	add("BinaryEquals", false, checkBinary, binaryMatch)
	add("Null", false, checkBool, nil) // evaluated on presence, in condition.holds
	conditionOperators["null"].null = true
}

// parseCondition reads a statement's Condition block. variables is whether the policy's
// Version (2012-10-17) makes ${...} in a value a policy variable.
func parseCondition(raw json.RawMessage, variables bool) ([]condition, error) {
	ops, err := objectMembers(raw, "Condition")
	if err != nil {
		return nil, err
	}
	var out []condition
	for _, op := range ops {
		c := condition{op: op.name}
		name := op.name
		for _, q := range []string{"ForAllValues", "ForAnyValue"} {
			if len(name) > len(q) && strings.EqualFold(name[:len(q)+1], q+":") {
				c.set, name = q, name[len(q)+1:]
				break
			}
		}
		if len(name) > len("IfExists") && strings.EqualFold(name[len(name)-len("IfExists"):], "IfExists") {
			c.ifExists, name = true, name[:len(name)-len("IfExists")]
		}
		c.kind = conditionOperators[strings.ToLower(name)]
		switch {
		case c.kind == nil:
			return nil, fmt.Errorf("the condition operator %s is not an IAM condition operator, so the condition cannot be evaluated", op.name)
		case c.kind.null && (c.ifExists || c.set != ""):
			return nil, fmt.Errorf("the condition operator %s cannot be evaluated: Null takes neither IfExists nor a ForAllValues or ForAnyValue qualifier", op.name)
		}
		keys, err := objectMembers(op.raw, "Condition operator "+op.name)
		if err != nil {
			return nil, err
		}
		if len(keys) == 0 {
			return nil, fmt.Errorf("the condition operator %s names no condition key", op.name)
		}
		for _, k := range keys {
			kc := c
			kc.key = strings.ToLower(k.name)
			if kc.values, err = conditionValues(k.raw); err != nil {
				return nil, fmt.Errorf("condition %s %s: %v", op.name, k.name, err)
			}
			for _, v := range kc.values {
				if why := kc.kind.check(v); why != "" {
					return nil, fmt.Errorf("condition %s %s: the value %q cannot be evaluated: %s", op.name, k.name, v, why)
				}
				if variables && strings.Contains(v, "${") {
					return nil, fmt.Errorf("condition %s %s: the value %q holds a policy variable (${...}), which this gateway does not evaluate", op.name, k.name, v)
				}
			}
			out = append(out, kc)
		}
	}
	return out, nil
}

// conditionsHold reports whether every condition holds in rc.
func conditionsHold(conds []condition, rc RequestContext) bool {
	for _, c := range conds {
		if !c.holds(rc) {
			return false
		}
	}
	return true
}

func (c condition) holds(rc RequestContext) bool {
	v, present := rc[c.key]
	if c.kind.null {
		return anyMatch(c.values, func(p string) bool { return strings.EqualFold(p, "true") != present })
	}
	if !present {
		switch {
		case c.ifExists, c.set == "ForAllValues":
			return true
		case c.set == "ForAnyValue":
			return false
		}
		return c.kind.negated
	}
	// A single-valued key: ForAllValues and ForAnyValue test its one value.
	matched := anyMatch(c.values, func(p string) bool { return c.kind.match(p, v) })
	return matched != c.kind.negated
}

// conditionValues decodes a key's value: a string, number or boolean, or a non-empty
// list of them, each as its text.
func conditionValues(raw json.RawMessage) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("the value is not JSON")
	}
	list, isList := v.([]any)
	if !isList {
		list = []any{v}
	} else if len(list) == 0 {
		return nil, fmt.Errorf("the list of values is empty")
	}
	out := make([]string, 0, len(list))
	for _, e := range list {
		switch e := e.(type) {
		case string:
			out = append(out, e)
		case json.Number:
			out = append(out, e.String())
		case bool:
			out = append(out, strconv.FormatBool(e))
		default:
			return nil, fmt.Errorf("a value must be a string, a number or a boolean")
		}
	}
	return out, nil
}

// member is one member of a JSON object, in document order.
type member struct {
	name string
	raw  json.RawMessage
}

// objectMembers decodes a JSON object keeping its members' order, refusing a name that
// appears twice (a decoder would keep only the last, silently dropping a condition).
func objectMembers(raw json.RawMessage, what string) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("%s is not a JSON object", what)
	}
	var out []member
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%s is not a JSON object", what)
		}
		name := t.(string) // object keys are strings
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s is not a JSON object", what)
		}
		if seen[name] {
			return nil, fmt.Errorf("%s names %s twice", what, name)
		}
		seen[name] = true
		out = append(out, member{name, v})
	}
	return out, nil
}

// wildcardMatch matches IAM's string wildcards: * any run of characters (none
// included), ? any one character; everything else literally, case-sensitively.
func wildcardMatch(pattern, s string) bool {
	p, v := []rune(pattern), []rune(s)
	pi, vi, star, mark := 0, 0, -1, 0
	for vi < len(v) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == v[vi]):
			pi++
			vi++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, vi
			pi++
		case star >= 0:
			pi, mark = star+1, mark+1
			vi = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// arnParts splits an ARN into its six colon-separated parts (the last one keeps its
// own colons).
func arnParts(s string) ([]string, bool) {
	parts := strings.SplitN(s, ":", 6)
	return parts, len(parts) == 6 && parts[0] == "arn"
}

// checkARN accepts an ARN, and also a value without wildcards that is not one: SQS
// stores such a policy (an unfilled template placeholder, say), and the value equals no
// ARN, so it matches nothing. A non-ARN with wildcards is refused: whether IAM would read
// it as a pattern over whole ARNs is not documented.
func checkARN(v string) string {
	if _, ok := arnParts(v); !ok && strings.ContainsAny(v, "*?") {
		return "it is not an ARN (arn:partition:service:region:account:resource) and holds wildcards"
	}
	return ""
}

// arnMatch is ArnEquals and ArnLike alike: each of the six parts is matched on its own,
// with * and ? wildcards, case-sensitively.
func arnMatch(p, v string) bool {
	pp, okP := arnParts(p)
	vp, ok := arnParts(v)
	if !ok || !okP {
		return false // a value that is not an ARN matches none
	}
	for i := range pp {
		if !wildcardMatch(pp[i], vp[i]) {
			return false
		}
	}
	return true
}

var numberSyntax = regexp.MustCompile(`^[+-]?(\d+(\.\d*)?|\.\d+)$`)

func checkNumber(v string) string {
	if !numberSyntax.MatchString(v) {
		return "it is not a number"
	}
	return ""
}

func numericCompare(ok func(int) bool) func(p, v string) bool {
	return func(p, v string) bool {
		if !numberSyntax.MatchString(v) {
			return false
		}
		pf, _ := strconv.ParseFloat(p, 64)
		vf, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return false
		}
		switch {
		case vf < pf:
			return ok(-1)
		case vf > pf:
			return ok(1)
		}
		return ok(0)
	}
}

// dateLayouts are the ISO 8601 forms IAM's Date operators read, besides epoch seconds.
var dateLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04Z07:00", "2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02T15:04:05.999999999", "2006-01-02T15:04", "2006-01-02"}

// parseDate reads epoch seconds or an ISO 8601 date; without a zone it is UTC.
func parseDate(v string) (time.Time, bool) {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.Unix(n, 0), true
	}
	for _, l := range dateLayouts {
		if t, err := time.Parse(l, v); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

func checkDate(v string) string {
	if _, ok := parseDate(v); !ok {
		return "it is neither an ISO 8601 date and time nor epoch seconds"
	}
	return ""
}

func dateCompare(ok func(int) bool) func(p, v string) bool {
	return func(p, v string) bool {
		pt, _ := parseDate(p)
		vt, good := parseDate(v)
		return good && ok(vt.Compare(pt))
	}
}

// parseCIDR reads an IPv4 or IPv6 range, a lone address standing for itself.
func parseCIDR(v string) (netip.Prefix, bool) {
	if p, err := netip.ParsePrefix(v); err == nil {
		return p.Masked(), true
	}
	if a, err := netip.ParseAddr(v); err == nil && a.Zone() == "" {
		return netip.PrefixFrom(a, a.BitLen()), true
	}
	return netip.Prefix{}, false
}

func checkIP(v string) string {
	if _, ok := parseCIDR(v); !ok {
		return "it is not an IPv4 or IPv6 address or CIDR range"
	}
	return ""
}

func ipMatch(p, v string) bool {
	pfx, _ := parseCIDR(p)
	a, err := netip.ParseAddr(v)
	return err == nil && pfx.Contains(a.Unmap())
}

func checkBool(v string) string {
	if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
		return "it is neither true nor false"
	}
	return ""
}

func checkBinary(v string) string {
	if _, err := base64.StdEncoding.DecodeString(v); err != nil {
		return "it is not base64"
	}
	return ""
}

func binaryMatch(p, v string) bool {
	b, _ := base64.StdEncoding.DecodeString(p)
	return string(b) == v
}
