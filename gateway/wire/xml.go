package wire

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// XMLNamespace is the namespace of every Query protocol response.
const XMLNamespace = "http://queue.amazonaws.com/doc/2012-11-05/"

// RenderXML writes an output struct (types.go) as the body of a Query <…Result> element.
// Members are named by their json tag; lists and maps are flattened, as the SQS model
// declares them all, under the element names of the `sqsxml` tag: "Elem" for a list,
// "Elem,KeyName,ValueName" for a map. Maps are written in key order.
func RenderXML(b *bytes.Buffer, v reflect.Value) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f, fv := t.Field(i), v.Field(i)
		if f.Anonymous {
			RenderXML(b, fv)
			continue
		}
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		elem := strings.Split(f.Tag.Get("sqsxml"), ",")
		renderMember(b, name, elem, fv, strings.Contains(opts, "omitempty"))
	}
}

func renderMember(b *bytes.Buffer, name string, elem []string, v reflect.Value, omitEmpty bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			renderMember(b, name, elem, v.Elem(), false)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 { // []byte: base64
			if v.Len() > 0 || !omitEmpty {
				writeElem(b, name, base64.StdEncoding.EncodeToString(v.Bytes()))
			}
			return
		}
		for i := 0; i < v.Len(); i++ {
			b.WriteString("<" + elem[0] + ">")
			renderValue(b, v.Index(i))
			b.WriteString("</" + elem[0] + ">")
		}
	case reflect.Map:
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
		for _, k := range keys {
			b.WriteString("<" + elem[0] + ">")
			writeElem(b, elem[1], k.String())
			b.WriteString("<" + elem[2] + ">")
			renderValue(b, v.MapIndex(k))
			b.WriteString("</" + elem[2] + ">")
			b.WriteString("</" + elem[0] + ">")
		}
	default:
		if omitEmpty && v.IsZero() {
			return
		}
		b.WriteString("<" + name + ">")
		renderValue(b, v)
		b.WriteString("</" + name + ">")
	}
}

// renderValue writes v's content without an enclosing element.
func renderValue(b *bytes.Buffer, v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		RenderXML(b, v)
	case reflect.String:
		EscapeXML(b, v.String())
	case reflect.Bool:
		b.WriteString(strconv.FormatBool(v.Bool()))
	case reflect.Int, reflect.Int32, reflect.Int64:
		b.WriteString(strconv.FormatInt(v.Int(), 10))
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			b.WriteString(base64.StdEncoding.EncodeToString(v.Bytes()))
		}
	case reflect.Pointer:
		if !v.IsNil() {
			renderValue(b, v.Elem())
		}
	}
}

func writeElem(b *bytes.Buffer, name, text string) {
	b.WriteString("<" + name + ">")
	EscapeXML(b, text)
	b.WriteString("</" + name + ">")
}

// EscapeXML escapes XML text. encoding/xml escapes \r, \n and \t as character references,
// which is what keeps a message body's carriage returns intact through XML parsers.
func EscapeXML(b *bytes.Buffer, s string) {
	_ = xml.EscapeText(b, []byte(s))
}
