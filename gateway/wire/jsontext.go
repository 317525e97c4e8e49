package wire

import (
	"bytes"
	"strings"

	"github.com/segmentio/encoding/json"

	"github.com/anysqs/anysqs/gateway/sqserr"
)

// CheckJSONText refuses what a JSON decoder accepts silently but changes: a member name
// that appears twice in one object, of which the decoder keeps the last value, and a \u
// EscapeXML of a lone UTF-16 surrogate, which it replaces with U+FFFD, a character the client
// never sent. Names of a structure's members are compared without regard to case, as the
// decoder matches them to fields; keys of a map member (mapMembers: tags, queue and
// message attributes) are compared exactly, as the decoder keeps them and as SQS treats
// them, so "mytag" and "MyTag" are two tags. b must be valid JSON: the scan does not
// validate it.
func CheckJSONText(b []byte) error {
	if name, ok := repeatedMember(b); ok {
		return sqserr.New(sqserr.InvalidParameterValue, "The request repeats the member %s; send each member once.", name)
	}
	if loneSurrogate(b) {
		return sqserr.New(sqserr.InvalidParameterValue, "The request has a \\u EscapeXML of a lone UTF-16 surrogate, which is no character.")
	}
	return nil
}

// mapMembers are the request members (of any action, in any case) whose value is a map
// with case-sensitive keys.
var mapMembers = []string{"Attributes", "Tags", "MessageAttributes", "MessageSystemAttributes"}

// openObject is an object the scan is inside.
type openObject struct {
	from  int    // where its names begin in the names list
	isMap bool   // a map member's value: keys compare exactly
	last  []byte // its latest member name, whose value may be the next object
}

// repeatedMember returns the first member name that appears twice in one object of b.
func repeatedMember(b []byte) (string, bool) {
	var (
		names [][]byte                // the names of the open objects, innermost last
		open  []openObject            // the open objects, innermost last
		sets  map[int]map[string]bool // by depth, for an object with many names
	)
	for i := 0; i < len(b); i++ {
		j := bytes.IndexAny(b[i:], `{}"`)
		if j < 0 {
			break
		}
		i += j
		switch b[i] {
		case '{':
			open = append(open, openObject{from: len(names), isMap: isMapValue(b, i, open)})
		case '}':
			if n := len(open); n > 0 {
				names, open = names[:open[n-1].from], open[:n-1]
				delete(sets, n)
			}
		case '"':
			end := stringEnd(b, i)
			if end < 0 {
				return "", false
			}
			k := end + 1
			for k < len(b) && isSpace(b[k]) {
				k++
			}
			// A string followed by ':' is a member name of the innermost object.
			if k < len(b) && b[k] == ':' && len(open) > 0 {
				o := &open[len(open)-1]
				name, dup := addName(b[i:end+1], &names, o.from, len(open), o.isMap, &sets)
				if dup {
					return name, true
				}
				o.last = names[len(names)-1]
			}
			i = end
		}
	}
	return "", false
}

// isMapValue says whether the object opening at b[i] is the value of a map member of
// the innermost open object, itself a structure (a map's values are never maps).
func isMapValue(b []byte, i int, open []openObject) bool {
	if len(open) == 0 || open[len(open)-1].isMap {
		return false
	}
	k := i - 1
	for k >= 0 && isSpace(b[k]) {
		k--
	}
	if k < 0 || b[k] != ':' {
		return false // an element of a list, or the top level
	}
	last := open[len(open)-1].last
	for _, m := range mapMembers {
		if bytes.EqualFold(last, []byte(m)) {
			return true
		}
	}
	return false
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// addName adds the quoted name q to the innermost object, whose names begin at
// names[from], and says whether it was there already: exactly when the object is a map
// (exact), else in any case.
func addName(q []byte, names *[][]byte, from, depth int, exact bool, sets *map[int]map[string]bool) (string, bool) {
	name := q[1 : len(q)-1]
	if bytes.IndexByte(name, '\\') >= 0 {
		// Compare names as the decoder reads them: "\u0051ueueName" is QueueName.
		var s string
		if json.Unmarshal(q, &s) == nil {
			name = []byte(s)
		}
	}
	key := func(n []byte) string {
		if exact {
			return string(n)
		}
		return strings.ToLower(string(n))
	}
	if set := (*sets)[depth]; set != nil {
		k := key(name)
		if set[k] {
			return string(name), true
		}
		set[k] = true
		*names = append(*names, name)
		return "", false
	}
	own := (*names)[from:]
	for _, n := range own {
		if exact && bytes.Equal(n, name) || !exact && bytes.EqualFold(n, name) {
			return string(name), true
		}
	}
	*names = append(*names, name)
	if len(own) >= 16 {
		// Past a few names a set keeps the scan linear; the names stay listed so that
		// closing the object still finds where its names begin.
		if *sets == nil {
			*sets = map[int]map[string]bool{}
		}
		set := make(map[string]bool, 64)
		for _, n := range (*names)[from:] {
			set[key(n)] = true
		}
		(*sets)[depth] = set
	}
	return "", false
}

// stringEnd returns the index of the quote that closes the JSON string opening at b[i],
// or -1.
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return -1
}

// loneSurrogate says whether a \u EscapeXML in b names a UTF-16 surrogate that is not one
// half of a high-low pair.
func loneSurrogate(b []byte) bool {
	for i := bytes.Index(b, []byte(`\u`)); i >= 0; {
		if i > 0 && precededByBackslashes(b, i) {
			i = next(b, i+2)
			continue
		}
		r, ok := hex4(b, i+2)
		switch {
		case ok && r >= 0xD800 && r <= 0xDBFF:
			if i+12 > len(b) || b[i+6] != '\\' || b[i+7] != 'u' {
				return true
			}
			if lo, ok := hex4(b, i+8); !ok || lo < 0xDC00 || lo > 0xDFFF {
				return true
			}
			i = next(b, i+12)
		case ok && r >= 0xDC00 && r <= 0xDFFF:
			return true
		default:
			i = next(b, i+2)
		}
	}
	return false
}

// precededByBackslashes says whether the backslash at b[i] is itself escaped.
func precededByBackslashes(b []byte, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && b[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

func next(b []byte, from int) int {
	if from >= len(b) {
		return -1
	}
	if j := bytes.Index(b[from:], []byte(`\u`)); j >= 0 {
		return from + j
	}
	return -1
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
