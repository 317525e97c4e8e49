// Package sqserr is the single table of SQS errors the gateway can return, with the
// codes and HTTP statuses of both wire protocols, and the error value that carries one.
//
// The table is errors.json; go generate writes the Code constants, Specs and AllCodes
// from it (zz_generated.go), and the same codes as strings for the capabilities package.
// HTTP statuses and Query codes follow the SQS Smithy model (aws-sdk-go-v2 service/sqs
// schemas, botocore service-2.json); codes the model leaves out (the AWS common errors)
// use the API reference's common-errors page.
package sqserr

import (
	"fmt"
	"time"
)

//go:generate go run ../../internal/gen/sqserrors -in errors.json -out zz_generated.go -capabilities ../../capabilities/zz_sqscodes.go

// Code identifies one SQS error; it is the short name used in the AWS JSON protocol's
// __type (after the "com.amazonaws.sqs#" prefix).
type Code string

// Spec is how one Code is rendered on the wire.
type Spec struct {
	Code      Code
	QueryCode string // Query protocol <Code>, also sent in the x-amzn-query-error header
	Status    int    // HTTP status
	Sender    bool   // fault: Sender (client) or Receiver (server)
}

// SpecOf returns the Spec of c; an unknown code renders as InternalError so that a
// programming mistake never reaches the client as a malformed error.
func SpecOf(c Code) Spec {
	if s, ok := Specs[c]; ok {
		return s
	}
	return Specs[InternalError]
}

// Fault is "Sender" or "Receiver", as both protocols spell it.
func (s Spec) Fault() string {
	if s.Sender {
		return "Sender"
	}
	return "Receiver"
}

// Error is an SQS error returned by the gateway.
type Error struct {
	Code    Code
	Message string
	// RetryAfter, if positive, is sent as the HTTP Retry-After header: the backend's hint
	// of how long the client should wait before trying again.
	RetryAfter time.Duration
	// Err, if set, is the cause: the driver's error, with what the backend said. It is
	// logged with the request id and never sent to the client; Error leaves it out.
	Err error
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// New returns an *Error with a formatted message.
func New(c Code, format string, args ...any) *Error {
	return &Error{Code: c, Message: fmt.Sprintf(format, args...)}
}
