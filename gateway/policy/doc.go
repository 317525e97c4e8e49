// Package policy parses and evaluates SQS queue policies (the Policy attribute, also
// edited by AddPermission and RemovePermission): the part of IAM's policy language that
// names accounts, and the condition operators and request keys a request to the gateway
// carries. A policy it would not evaluate as written is refused when set (CheckQueuePolicy).
//
// It knows nothing of drivers or of the gateway's server: the request's facts come in
// as a RequestFacts.
package policy
