package verify

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// secretWords mark option names whose values are never shown.
var secretWords = []string{"password", "secret", "key", "token", "credential"}

// Location describes where a backend's options point, for a report: every option
// but those naming a secret, with passwords taken out of URLs and DSNs and only the
// endpoint kept of a connection string.
func Location(opts map[string]any) string {
	var parts []string
	for k, v := range opts {
		s, ok := scalar(v)
		if !ok || s == "" {
			continue
		}
		lk := strings.ToLower(k)
		switch {
		case lk == "connection_string":
			if ep := connEndpoint(s); ep != "" {
				parts = append(parts, "endpoint="+ep)
			}
			continue
		case secret(lk):
			continue
		}
		parts = append(parts, k+"="+scrub(s))
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		return "the backend's defaults"
	}
	return strings.Join(parts, " ")
}

func secret(name string) bool {
	for _, w := range secretWords {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

func scalar(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case bool, int, int64, float64:
		return fmt.Sprint(v), true
	}
	return "", false
}

// scrub removes a password from a URL, or from a key=value DSN.
func scrub(s string) string {
	if u, err := url.Parse(s); err == nil && u.Scheme != "" && u.Host != "" {
		if _, has := u.User.Password(); u.User != nil && has {
			u.User = url.UserPassword(u.User.Username(), "REDACTED")
		}
		q := u.Query()
		for k := range q {
			if secret(strings.ToLower(k)) {
				q.Set(k, "REDACTED")
			}
		}
		u.RawQuery = q.Encode()
		return u.String()
	}
	if strings.Contains(s, "=") && strings.Contains(s, " ") {
		f := strings.Fields(s)
		for i, kv := range f {
			if k, _, ok := strings.Cut(kv, "="); ok && secret(strings.ToLower(k)) {
				f[i] = k + "=REDACTED"
			}
		}
		return strings.Join(f, " ")
	}
	return s
}

// connEndpoint is the Endpoint= part of an Azure connection string.
func connEndpoint(s string) string {
	for _, part := range strings.Split(s, ";") {
		if k, v, ok := strings.Cut(part, "="); ok && strings.EqualFold(strings.TrimSpace(k), "Endpoint") {
			return v
		}
	}
	return ""
}
