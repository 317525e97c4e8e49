package gateway

import "strconv"

// EnforcedLimits lists the catalog limits the gateway checks, as "capability/key".
func EnforcedLimits() []string {
	out := make([]string, len(enforcedLimits))
	for i, l := range enforcedLimits {
		out[i] = string(l.id) + "/" + l.key
	}
	return out
}

// DeclaredBounds lists the limits s enforces because the backend declared them tighter
// than SQS's, as "capability/key=value".
func DeclaredBounds(s *Server) []string {
	var out []string
	for _, l := range enforcedLimits {
		if b, ok := s.fallback.limits.bounds[l]; ok {
			out = append(out, string(l.id)+"/"+l.key+"="+strconv.FormatInt(b, 10))
		}
	}
	return out
}
