package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/anysqs/anysqs/internal/declare"
)

// source remembers where in the file each key was, so that an error found after
// loading (a value out of range, a driver option) can still point at its line.
type source struct {
	path  string         // "" without a file
	lines map[string]int // dotted key path ("backend.options.data_dir") → line
	// from names what set a key after the file, an environment variable or a flag
	// ("listen" → "--listen"), so an error about its value blames that and not the
	// file's line, which no longer holds the value in use.
	from map[string]string
}

// Error is a configuration mistake located in its file, or at the environment variable
// or flag that set the value.
type Error struct {
	File string // the configuration file
	Line int    // 1-based; 0 when the key is not in the file (a default or an override)
	Key  string // dotted path of the key, e.g. "backend.options.data_dir"
	From string // the environment variable or flag that set the value; "" for the file
	Msg  string
}

func (e *Error) Error() string {
	switch {
	case e.From != "":
		return fmt.Sprintf("%s (set by %s): %s", e.Key, e.From, e.Msg)
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Key, e.Msg)
	case e.File != "":
		return fmt.Sprintf("%s: %s: %s", e.File, e.Key, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Key, e.Msg)
}

// Locate returns an error about key (a dotted path such as "backend.options.dsn") that
// names the file and the line where the key is, or the nearest enclosing key that is
// there. It is for mistakes found after loading, by a driver decoding its options.
func (c Config) Locate(key, msg string) error {
	if c.src == nil {
		return &Error{Key: key, Msg: msg}
	}
	return c.src.at(key, msg)
}

func (s *source) at(key, msg string) *Error {
	e := &Error{File: s.path, Key: key, Msg: msg}
	// The whole way up: an override of an enclosing key (ANYSQS_AUTH_CREDENTIALS for
	// auth.credentials[0]) replaced what the file's line for this one says.
	for k := key; k != ""; {
		if from, ok := s.from[k]; ok {
			return &Error{Key: key, From: from, Msg: msg}
		}
		if line, ok := s.lines[k]; ok && e.Line == 0 {
			e.Line = line
		}
		i := strings.LastIndexAny(k, ".[")
		if i < 0 {
			break
		}
		k = k[:i]
	}
	return e
}

// wrap locates a validation error of the form "key: message" in the file.
func (s *source) wrap(err error) error {
	var located *declare.Error
	if s == nil || err == nil || errors.As(err, &located) {
		return err
	}
	key, msg, ok := strings.Cut(err.Error(), ": ")
	switch {
	case (!ok || strings.ContainsAny(key, " ")) && s.path == "":
		return err
	case !ok || strings.ContainsAny(key, " "):
		return fmt.Errorf("%s: %w", s.path, err)
	}
	return s.at(key, msg)
}

// check walks the YAML tree n against the Go type t, recording each key's line and
// rejecting unknown keys and values of the wrong shape in YAML's terms.
func (s *source) check(n *yaml.Node, t reflect.Type, path string) error {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil // an empty key: the default
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	want := shapeOf(t)
	if got := shapeOfNode(n); want != "" && got != want {
		return s.bad(n.Line, path, fmt.Sprintf("want %s, got %s", want, describe(n)))
	}
	switch t.Kind() {
	case reflect.Struct:
		fields := map[string]reflect.StructField{}
		for i := range t.NumField() {
			f := t.Field(i)
			if name, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); name != "" && name != "-" {
				fields[name] = f
			}
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			key := join(path, k.Value)
			f, ok := fields[k.Value]
			if !ok {
				return s.bad(k.Line, key, unknownKey(k.Value, fields))
			}
			s.lines[key] = k.Line
			if err := s.check(v, f.Type, key); err != nil {
				return err
			}
		}
	case reflect.Slice:
		for i, item := range n.Content {
			key := fmt.Sprintf("%s[%d]", path, i)
			s.lines[key] = item.Line
			if err := s.check(item, t.Elem(), key); err != nil {
				return err
			}
		}
	case reflect.Map:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			key := join(path, k.Value)
			s.lines[key] = k.Line
			// map[string]any holds a driver's options: record their lines for its errors.
			if err := s.check(v, t.Elem(), key); err != nil {
				return err
			}
		}
	case reflect.Interface:
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				key := join(path, n.Content[i].Value)
				s.lines[key] = n.Content[i].Line
				if err := s.check(n.Content[i+1], t, key); err != nil {
					return err
				}
			}
		}
		if n.Kind == yaml.SequenceNode {
			for i, item := range n.Content {
				key := fmt.Sprintf("%s[%d]", path, i)
				s.lines[key] = item.Line
				if err := s.check(item, t, key); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// set records that an environment variable or a flag set key.
func (s *source) set(key, by string) {
	if s.from == nil {
		s.from = map[string]string{}
	}
	s.from[key] = by
}

func (s *source) bad(line int, key, msg string) error {
	return &Error{File: s.path, Line: line, Key: key, Msg: msg}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// shapeOf is the YAML node kind a Go type decodes from: "" when any will do.
func shapeOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "a mapping"
	case reflect.Slice:
		return "a list"
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int64, reflect.Float64:
		return "a single value"
	}
	return ""
}

func shapeOfNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return "a single value"
}

func describe(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return fmt.Sprintf("%q", n.Value)
	}
	return shapeOfNode(n)
}

// unknownKey says which keys the section has, and the likeliest one meant.
func unknownKey(key string, fields map[string]reflect.StructField) string {
	known := make([]string, 0, len(fields))
	for k := range fields {
		known = append(known, k)
	}
	sort.Strings(known)
	msg := "unknown key"
	if best := closest(key, known); best != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", best)
	}
	return msg + "; this section has: " + strings.Join(known, ", ")
}

// closest returns the candidate within edit distance 2 of key, if one is.
func closest(key string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := editDistance(key, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// resolvePaths makes relative path options (keys ending in _dir, _file or _path, at any
// depth) relative to base, the configuration file's directory. ":memory:" and the like,
// which are not paths, are left alone.
func resolvePaths(opts map[string]any, base string) {
	for k, v := range opts {
		switch v := v.(type) {
		case map[string]any:
			resolvePaths(v, base)
		case string:
			if isPathKey(k) && v != "" && !filepath.IsAbs(v) && !strings.HasPrefix(v, ":") && !strings.Contains(v, "://") {
				opts[k] = filepath.Join(base, v)
			}
		}
	}
}

func isPathKey(k string) bool {
	return strings.HasSuffix(k, "_dir") || strings.HasSuffix(k, "_file") || strings.HasSuffix(k, "_path")
}
