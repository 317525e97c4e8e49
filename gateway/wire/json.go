package wire

import "github.com/segmentio/encoding/json"

// EncodeJSON renders a JSON response body. SQS does not HTML-EscapeXML "<", ">" and "&" in
// message bodies; neither do we.
func EncodeJSON(out any) ([]byte, error) { return AppendJSON(nil, out) }

// AppendJSON appends the JSON response body of out to b: EncodeJSON without allocating
// when b has room. The flags are those of an Encoder with SetEscapeHTML(false).
func AppendJSON(b []byte, out any) ([]byte, error) { return json.Append(b, out, json.SortMapKeys) }

// Empty is the result of actions that return nothing but metadata.
type Empty struct{}
