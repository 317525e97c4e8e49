package wire

import (
	"encoding/json"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/anysqs/anysqs/gateway/sqserr"
)

// Query protocol requests arrive as flat form parameters such as
// "Attribute.1.Name=VisibilityTimeout&Attribute.1.Value=30" or
// "SendMessageBatchRequestEntry.2.MessageAttribute.1.Value.StringValue=x". QueryToJSON
// rebuilds the tree those dotted names describe and renames each flattened element
// (the model's xmlName) to its JSON member name, producing the AWS JSON 1.0 body of the
// same request. Every action is then decoded once, from JSON.

// queryMembers maps a Query element name to its JSON member name. Plural names map to
// themselves so that clients sending the JSON member name also work.
var queryMembers = map[string]string{
	"Attribute": "Attributes", "Attributes": "Attributes",
	"Tag": "Tags", "Tags": "Tags",
	"AttributeName": "AttributeNames", "AttributeNames": "AttributeNames",
	"MessageSystemAttributeName": "MessageSystemAttributeNames", "MessageSystemAttributeNames": "MessageSystemAttributeNames",
	"MessageAttributeName": "MessageAttributeNames", "MessageAttributeNames": "MessageAttributeNames",
	"MessageAttribute": "MessageAttributes", "MessageAttributes": "MessageAttributes",
	"MessageSystemAttribute": "MessageSystemAttributes", "MessageSystemAttributes": "MessageSystemAttributes",
	"TagKey": "TagKeys", "TagKeys": "TagKeys",
	"SendMessageBatchRequestEntry":             "Entries",
	"DeleteMessageBatchRequestEntry":           "Entries",
	"ChangeMessageVisibilityBatchRequestEntry": "Entries",
	"Entries":         "Entries",
	"StringListValue": "StringListValues", "StringListValues": "StringListValues",
	"BinaryListValue": "BinaryListValues", "BinaryListValues": "BinaryListValues",
	"AWSAccountId": "AWSAccountIds", "AWSAccountIds": "AWSAccountIds",
	"ActionName": "Actions", "Actions": "Actions",
}

// queryMapKey names the key element of each flattened map member.
var queryMapKey = map[string]string{
	"Attributes": "Name", "Tags": "Key", "MessageAttributes": "Name", "MessageSystemAttributes": "Name",
}

// queryIntegers are the members whose JSON type is a number.
var queryIntegers = map[string]bool{
	"MaxResults": true, "MaxNumberOfMessages": true, "VisibilityTimeout": true,
	"WaitTimeSeconds": true, "DelaySeconds": true, "MaxNumberOfMessagesPerSecond": true,
}

// queryIgnored are protocol and signature parameters that are not members of any input.
var queryIgnored = map[string]bool{
	"Action": true, "Version": true, "AWSAccessKeyId": true, "Signature": true,
	"SignatureMethod": true, "SignatureVersion": true, "Timestamp": true, "Expires": true,
	"SecurityToken": true,
}

// maxQueryParams bounds the tree a single request may build, and maxQueryDepth its depth:
// the deepest member, SendMessageBatchRequestEntry.N.MessageAttribute.N.Value.StringListValue.N,
// has seven parts.
const (
	maxQueryParams = 10000
	maxQueryDepth  = 10
)

type queryNode struct {
	value  *string
	fields map[string]*queryNode
}

func (n *queryNode) child(k string) *queryNode {
	if n.fields == nil {
		n.fields = map[string]*queryNode{}
	}
	c := n.fields[k]
	if c == nil {
		c = &queryNode{}
		n.fields[k] = c
	}
	return c
}

// QueryToJSON converts the parameters of one Query request into the JSON body of the same
// request. action selects the few members whose JSON name differs between actions.
func QueryToJSON(action string, form url.Values) ([]byte, error) {
	if len(form) > maxQueryParams {
		return nil, sqserr.New(sqserr.InvalidParameterValue, "too many parameters: %d (at most %d)", len(form), maxQueryParams)
	}
	root := &queryNode{}
	for key, vals := range form {
		if queryIgnored[key] || strings.HasPrefix(key, "X-Amz-") || len(vals) == 0 {
			continue
		}
		if len(vals) > 1 {
			return nil, sqserr.New(sqserr.InvalidParameterValue, "The request repeats the parameter %s; send each parameter once.", key)
		}
		if !utf8.ValidString(key) || !utf8.ValidString(vals[0]) {
			return nil, sqserr.New(sqserr.InvalidParameterValue, "The parameter %q is not valid UTF-8.", strings.ToValidUTF8(key, "?"))
		}
		if strings.Count(key, ".") >= maxQueryDepth {
			return nil, sqserr.New(sqserr.InvalidParameterValue, "The parameter name %.80q has more than %d parts.", key, maxQueryDepth)
		}
		n := root
		for _, part := range strings.Split(key, ".") {
			if part == "" {
				return nil, sqserr.New(sqserr.InvalidParameterValue, "malformed parameter name %q", key)
			}
			n = n.child(part)
		}
		v := vals[0]
		n.value = &v
	}
	obj, err := convertStruct(root, "")
	if err != nil {
		return nil, err
	}
	if action == "CreateQueue" {
		// CreateQueue's tag map is the one lower-case member of the model.
		if t, ok := obj["Tags"]; ok {
			delete(obj, "Tags")
			obj["tags"] = t
		}
	}
	return json.Marshal(obj)
}

func convertStruct(n *queryNode, path string) (map[string]any, error) {
	out := make(map[string]any, len(n.fields))
	for k, c := range n.fields {
		name := k
		if m, ok := queryMembers[k]; ok {
			name = m
		}
		v, err := convertMember(c, name, join(path, k))
		if err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, nil
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func convertMember(n *queryNode, name, path string) (any, error) {
	if len(n.fields) == 0 {
		v := ""
		if n.value != nil {
			v = *n.value
		}
		if _, isList := queryMembers[name]; isList && v == "" {
			// botocore sends an empty list or map as "Name=".
			if _, isMap := queryMapKey[name]; isMap {
				return map[string]any{}, nil
			}
			return []any{}, nil
		}
		if queryIntegers[name] {
			i, err := strconv.ParseInt(v, 10, 32)
			if err != nil {
				return nil, sqserr.New(sqserr.InvalidParameterValue, "Value %s for parameter %s is invalid. Reason: must be an integer.", v, path)
			}
			return i, nil
		}
		return v, nil
	}
	items, isList := indexed(n)
	if !isList {
		return convertStruct(n, path)
	}
	if keyName, isMap := queryMapKey[name]; isMap {
		m := make(map[string]any, len(items))
		for _, it := range items {
			p := path + "." + it.index
			k := it.node.fields[keyName]
			if k == nil || k.value == nil {
				return nil, sqserr.New(sqserr.MissingParameter, "The request must contain the parameter %s.%s.", p, keyName)
			}
			var v any = ""
			if vn := it.node.fields["Value"]; vn != nil {
				var err error
				if v, err = convertMember(vn, "Value", p+".Value"); err != nil {
					return nil, err
				}
			}
			if _, dup := m[*k.value]; dup {
				// Keys are case-sensitive, as on SQS; only the same key twice is a repeat.
				return nil, sqserr.New(sqserr.InvalidParameterValue, "The request repeats %s %s in %s; send each once.", keyName, *k.value, p)
			}
			m[*k.value] = v
		}
		return m, nil
	}
	list := make([]any, 0, len(items))
	for _, it := range items {
		v, err := convertMember(it.node, "", path+"."+it.index)
		if err != nil {
			return nil, err
		}
		list = append(list, v)
	}
	return list, nil
}

type indexedNode struct {
	index string
	n     int
	node  *queryNode
}

// indexed returns n's children in index order if they are all positive integers.
func indexed(n *queryNode) ([]indexedNode, bool) {
	xs := make([]indexedNode, 0, len(n.fields))
	for k, c := range n.fields {
		i, err := strconv.Atoi(k)
		if err != nil || i < 1 {
			return nil, false
		}
		xs = append(xs, indexedNode{k, i, c})
	}
	sort.Slice(xs, func(a, b int) bool { return xs[a].n < xs[b].n })
	return xs, true
}
