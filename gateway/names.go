package gateway

import (
	"context"
	"net/url"
	"strings"

	"github.com/anysqs/anysqs/gateway/policy"
	"github.com/anysqs/anysqs/gateway/sqserr"
)

// queueURL is the URL of the stored queue as seen by a request to base: its owner's
// account and its name.
func (s *Server) queueURL(base, stored string) string {
	account, name := s.splitStored(stored)
	return base + "/" + account + "/" + name
}

// queueNameFromURL resolves a queue URL sent by c to the stored name of its queue, and
// checks that c may act on it (authorize). It takes any of the forms SDKs send:
// "http(s)://host[:port]/<account>/<name>", the path alone, the legacy
// "https://queue.amazonaws.com/<account>/<name>", or a bare name for c's own queue. The
// host is ignored, so a URL built for 127.0.0.1 works through localhost.
func (s *Server) queueNameFromURL(ctx context.Context, c *call, raw string) (string, error) {
	if raw == "" {
		return "", sqserr.New(sqserr.MissingParameter, "The request must contain the parameter QueueUrl.")
	}
	if !strings.ContainsAny(raw, "/:") {
		// SQS takes a bare queue name for the caller's queue of that name. A stored name
		// of another account's queue is no queue name.
		if strings.Contains(raw, nsSeparator) {
			return "", sqserr.New(sqserr.QueueDoesNotExist, "The specified queue %s does not exist.", raw)
		}
		return s.storedName(c.account, raw), nil
	}
	path := raw
	if strings.Contains(raw, "://") {
		u, err := url.Parse(raw)
		if err != nil {
			return "", sqserr.New(sqserr.InvalidAddress, "The address %s is not valid for this endpoint.", raw)
		}
		path = u.Path
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) != 2 || parts[1] == "" {
		return "", sqserr.New(sqserr.InvalidAddress, "The address %s is not valid for this endpoint: expected /<account-id>/<queue-name>.", raw)
	}
	if !policy.IsAccountID(parts[0]) || strings.Contains(parts[1], nsSeparator) {
		return "", sqserr.New(sqserr.QueueDoesNotExist, "The specified queue %s does not exist.", raw)
	}
	stored := s.storedName(parts[0], parts[1])
	if err := s.authorize(ctx, c, stored); err != nil {
		return "", err
	}
	return stored, nil
}

// arn is the ARN of the stored queue.
func (s *Server) arn(stored string) string {
	account, name := s.splitStored(stored)
	return "arn:aws:sqs:" + s.cfg.Region + ":" + account + ":" + name
}

// parseARN returns the stored name of an SQS queue ARN in this gateway's region, of any
// account; whether the caller may use that queue is for authorize to say.
func (s *Server) parseARN(arn string) (string, bool) {
	p := strings.Split(arn, ":")
	if len(p) != 6 || p[0] != "arn" || p[2] != "sqs" || p[5] == "" {
		return "", false
	}
	if p[3] != s.cfg.Region || !policy.IsAccountID(p[4]) || strings.Contains(p[5], nsSeparator) {
		return "", false
	}
	return s.storedName(p[4], p[5]), true
}
