package wire

import (
	"bytes"
	"encoding/base64"
	"mime"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A Query request that accepts application/json (API Gateway's AWS integrations send
// one) gets SQS's legacy JSON rendering of the same result instead of XML:
//
//	{"SendMessageResponse":{"ResponseMetadata":{"RequestId":"…"},
//	 "SendMessageResult":{"MD5OfMessageAttributes":null,"MD5OfMessageBody":"…",…}}}
//
// The shape is that of SQS's own responses as recorded by its users: every member of
// the result, absent ones as null; list members named in lower camel case ("messages",
// "queueUrls", "successful"); object keys in byte order at every level; an action
// without a result has only ResponseMetadata. Errors stay XML, whose shape is known.

// AcceptsJSON reports whether an Accept header prefers application/json to XML: the
// first of the listed media types that names either wins (quality values are not
// weighed; no SQS client sends competing ones).
func AcceptsJSON(accept string) bool {
	if accept == "" {
		return false
	}
	for _, part := range strings.Split(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case "application/json":
			return true
		case "text/xml", "application/xml", "*/*", "text/*", "application/*":
			return false
		}
	}
	return false
}

// legacyJSONExtra lists members a result has in SQS's legacy JSON and not in the
// SQS model, always null.
var legacyJSONExtra = map[string][]string{
	"ListQueues": {"NextExclusiveStartQueueName"},
}

// RenderQueryJSON writes the legacy JSON body of one Query result.
func RenderQueryJSON(b *bytes.Buffer, reqID, name string, out any) {
	b.WriteString(`{"` + name + `Response":{`)
	meta := `"ResponseMetadata":{"RequestId":` + strconv.Quote(reqID) + `}`
	if _, empty := out.(Empty); empty {
		b.WriteString(meta + "}}")
		return
	}
	result := func() {
		b.WriteString(`"` + name + `Result":`)
		fields := legacyFields(reflect.Indirect(reflect.ValueOf(out)))
		for _, extra := range legacyJSONExtra[name] {
			fields = append(fields, legacyField{name: extra})
		}
		writeLegacyObject(b, fields)
	}
	// Keys in byte order: "ReceiveMessageResult" before "ResponseMetadata", which comes
	// before "SendMessageResult".
	if name+"Result" < "ResponseMetadata" {
		result()
		b.WriteString("," + meta + "}}")
		return
	}
	b.WriteString(meta + ",")
	result()
	b.WriteString("}}")
}

// legacyField is one member of a rendered object; an invalid value renders as null.
type legacyField struct {
	name string
	v    reflect.Value
	omit bool // the member is optional: its zero value is absent, so null
}

// legacyFields lists a struct's members, embedded structs' included, under their JSON
// protocol names, lists renamed to lower camel case.
func legacyFields(v reflect.Value) []legacyField {
	var out []legacyField
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f, fv := t.Field(i), v.Field(i)
		if f.Anonymous {
			out = append(out, legacyFields(fv)...)
			continue
		}
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() != reflect.Uint8 {
			r, size := utf8.DecodeRuneInString(name)
			name = string(unicode.ToLower(r)) + name[size:]
		}
		out = append(out, legacyField{name: name, v: fv, omit: strings.Contains(opts, "omitempty")})
	}
	return out
}

func writeLegacyObject(b *bytes.Buffer, fields []legacyField) {
	sort.Slice(fields, func(i, j int) bool { return fields[i].name < fields[j].name })
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSONString(b, f.name)
		b.WriteByte(':')
		if !f.v.IsValid() || (f.omit && f.v.IsZero()) {
			b.WriteString("null")
			continue
		}
		writeLegacyValue(b, f.v)
	}
	b.WriteByte('}')
}

func writeLegacyValue(b *bytes.Buffer, v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			b.WriteString("null")
			return
		}
		writeLegacyValue(b, v.Elem())
	case reflect.Struct:
		writeLegacyObject(b, legacyFields(v))
	case reflect.Map:
		if v.Len() == 0 {
			b.WriteString("null")
			return
		}
		fields := make([]legacyField, 0, v.Len())
		for _, k := range v.MapKeys() {
			fields = append(fields, legacyField{name: k.String(), v: v.MapIndex(k)})
		}
		writeLegacyObject(b, fields)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			writeJSONString(b, base64.StdEncoding.EncodeToString(v.Bytes()))
			return
		}
		if v.Len() == 0 {
			b.WriteString("null")
			return
		}
		b.WriteByte('[')
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			writeLegacyValue(b, v.Index(i))
		}
		b.WriteByte(']')
	case reflect.String:
		writeJSONString(b, v.String())
	case reflect.Bool:
		b.WriteString(strconv.FormatBool(v.Bool()))
	case reflect.Int, reflect.Int32, reflect.Int64:
		b.WriteString(strconv.FormatInt(v.Int(), 10))
	default:
		b.WriteString("null")
	}
}

// writeJSONString writes s as a JSON string, with "<", ">" and "&" as they are, as
// encodeJSON writes message bodies.
func writeJSONString(b *bytes.Buffer, s string) {
	body, err := EncodeJSON(s)
	if err != nil { // a Go string always encodes; invalid UTF-8 becomes U+FFFD
		b.WriteString(`""`)
		return
	}
	b.Write(body)
}
