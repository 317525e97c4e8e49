package gateway

import (
	"context"
	"strings"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/gateway/policy"
	"github.com/anysqs/anysqs/gateway/queueattr"
	"github.com/anysqs/anysqs/gateway/sqserr"
)

// Accounts. Every access key belongs to an account (Config.Accounts; unlisted keys and
// unauthenticated requests belong to Config.AccountID, the default account). A queue
// lives in the namespace of the account that created it: its URL and ARN carry that
// account's id, and another account may address it only as far as the queue's Policy
// allows (queuepolicy.go).
//
// The namespace is kept by the gateway, not by the drivers: a queue of the default
// account is stored under its own name, as before accounts existed, and a queue of any
// other account under "<account>..<name>". Two periods in a row never occur in an SQS
// queue name, so no name of one account can be the stored name of another's queue, and
// every backend keeps accounts apart with no change to the Driver contract (plugins
// included). Stored names stay within SQS's 80 characters, which every backend stores,
// so queue names of non-default accounts are at most 80-14 = 66 characters.

// nsSeparator separates the account from the queue name in a stored name.
const nsSeparator = ".."

// nsPrefixLength is the length of "<12-digit account>..".
const nsPrefixLength = 12 + len(nsSeparator)

// storedName is the name under which account's queue name is stored.
func (s *Server) storedName(account, name string) string {
	if account == s.cfg.AccountID {
		return name
	}
	return account + nsSeparator + name
}

// splitStored returns the account and the queue name of a stored name.
func (s *Server) splitStored(stored string) (account, name string) {
	if len(stored) > nsPrefixLength && stored[12:nsPrefixLength] == nsSeparator && policy.IsAccountID(stored[:12]) {
		return stored[:12], stored[nsPrefixLength:]
	}
	return s.cfg.AccountID, stored
}

// ownedBy reports whether stored is a queue of account.
func (s *Server) ownedBy(stored, account string) bool {
	a, _ := s.splitStored(stored)
	return a == account
}

// listPrefix is the stored-name prefix of account's queues whose names start with prefix.
func (s *Server) listPrefix(account, prefix string) string {
	return s.storedName(account, prefix)
}

// checkNameFits refuses a queue name that would not fit the backend once namespaced.
func (s *Server) checkNameFits(account, name string) error {
	if account == s.cfg.AccountID || len(name)+nsPrefixLength <= queueattr.MaxNameLength {
		return nil
	}
	max := queueattr.MaxNameLength - nsPrefixLength
	if queueattr.IsFIFOName(name) {
		return sqserr.New(sqserr.InvalidParameterValue, "The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with .fifo suffix and be 1 to %d in length (account %s on this gateway).", max, account)
	}
	return sqserr.New(sqserr.InvalidParameterValue, "Can only include alphanumeric characters, hyphens, or underscores. 1 to %d in length (account %s on this gateway).", max, account)
}

// accountOf is the account of access key key ("" for an unauthenticated request).
func (s *Server) accountOf(key string) string {
	if a, ok := s.cfg.Accounts[key]; ok && a != "" {
		return a
	}
	return s.cfg.AccountID
}

// authorize lets c act on the stored queue: at once when c's account owns it, else as the
// queue's Policy says. A queue of another account that does not exist, or whose policy
// does not allow the action, answers AccessDenied: what SQS answers a cross-account call
// without permission, and the same whether or not the queue exists, so one account cannot
// learn another's queue names.
func (s *Server) authorize(ctx context.Context, c *call, stored string) error {
	owner, _ := s.splitStored(stored)
	if owner == c.account {
		return nil
	}
	q, err := s.cachedQueue(ctx, stored)
	if err != nil && drivers.KindOf(err) != drivers.KindNotFound {
		return driverError(err, stored)
	}
	if err == nil && policy.AllowedByPolicy(q.Attributes.Policy, c.account, iamAction(c.action), s.arn(stored),
		policy.NewRequestContext(c.facts, c.account, s.cfg.Region, s.clock.Now())) {
		return nil
	}
	return sqserr.New(sqserr.AccessDenied, "Access to the resource %s is denied.", s.queueURL(c.base, stored))
}

// cachedQueue reads a queue through the queue cache.
func (s *Server) cachedQueue(ctx context.Context, stored string) (drivers.Queue, error) {
	now := s.clock.Now()
	q, ok, gen := s.queues.get(stored, now)
	if ok {
		return q, nil
	}
	q, err := s.on(stored).driver.GetQueue(ctx, drivers.GetQueueRequest{Name: stored})
	if err != nil {
		return drivers.Queue{}, err
	}
	s.queues.put(q, gen, now)
	return q, nil
}

// iamAction is the IAM action that authorizes SQS action name: a batch is authorized as
// its single form, a peek as a receive.
func iamAction(name string) string {
	if name == PeekAction {
		return "ReceiveMessage" // a peek shows what a receive would
	}
	return strings.TrimSuffix(name, "Batch")
}

// accountQueues lists, in stored-name order after after, up to limit stored names of
// account's queues whose names start with prefix. Another account's queues are found
// by their stored prefix; the default account's are the stored names without one, so
// its listing skips the others' (each page asks the backend again until it is full).
func (s *Server) accountQueues(ctx context.Context, account, prefix, after string, limit int) ([]string, bool, error) {
	var out []string
	for {
		res, err := s.listAll(ctx, drivers.ListQueuesRequest{Prefix: s.listPrefix(account, prefix), After: after, Limit: limit - len(out)})
		if err != nil {
			return nil, false, err
		}
		for _, q := range res.Queues {
			after = q.Name
			if s.ownedBy(q.Name, account) {
				out = append(out, q.Name)
			}
		}
		if !res.More || len(res.Queues) == 0 || len(out) == limit {
			return out, res.More, nil
		}
	}
}
