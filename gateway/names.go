package gateway

import (
	"net/url"
	"strings"

	"github.com/anysqs/anysqs/gateway/sqserr"
)

// queueURL is the URL of queue name as seen by a request to base.
func (s *Server) queueURL(base, name string) string {
	return base + "/" + s.cfg.AccountID + "/" + name
}

// queueNameFromURL extracts the queue name from a queue URL in any of the forms SDKs send:
// "http(s)://host[:port]/<account>/<name>", the path alone, or the legacy
// "https://queue.amazonaws.com/<account>/<name>". The host is ignored, so a URL built for
// 127.0.0.1 works through localhost; the account must be this gateway's.
func (s *Server) queueNameFromURL(raw string) (string, error) {
	if raw == "" {
		return "", sqserr.New(sqserr.MissingParameter, "The request must contain the parameter QueueUrl.")
	}
	if !strings.ContainsAny(raw, "/:") {
		// SQS takes a bare queue name for the caller's queue of that name.
		return raw, nil
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
	if parts[0] != s.cfg.AccountID {
		return "", sqserr.New(sqserr.QueueDoesNotExist, "The specified queue %s does not exist: account %s is not %s.", raw, parts[0], s.cfg.AccountID)
	}
	return parts[1], nil
}

// arn is the ARN of queue name.
func (s *Server) arn(name string) string {
	return "arn:aws:sqs:" + s.cfg.Region + ":" + s.cfg.AccountID + ":" + name
}

// parseARN returns the queue name of an SQS queue ARN in this gateway's region and account.
func (s *Server) parseARN(arn string) (string, bool) {
	p := strings.Split(arn, ":")
	if len(p) != 6 || p[0] != "arn" || p[2] != "sqs" || p[5] == "" {
		return "", false
	}
	if p[3] != s.cfg.Region || p[4] != s.cfg.AccountID {
		return "", false
	}
	return p[5], true
}
