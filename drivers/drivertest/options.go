package drivertest

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// OptionsDocumented fails t for each option of a driver's options struct opts (the
// names of its json tags, which are the keys of backend.options in a configuration)
// that one of files does not name: the driver's doc.go and its operator's guide, say.
// An option added without its documentation, or renamed in one place only, fails.
func OptionsDocumented(t *testing.T, opts any, files ...string) {
	t.Helper()
	names := optionNames(reflect.TypeOf(opts))
	if len(names) == 0 {
		t.Fatalf("%T has no json-tagged options", opts)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if !regexp.MustCompile(`\b` + regexp.QuoteMeta(n) + `\b`).Match(b) {
				t.Errorf("%s does not name the option %s of %T", f, n, opts)
			}
		}
	}
}

func optionNames(typ reflect.Type) []string {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	var out []string
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case f.Anonymous && name == "":
			out = append(out, optionNames(f.Type)...)
		case name != "" && name != "-" && f.IsExported():
			out = append(out, name)
		}
	}
	return out
}
