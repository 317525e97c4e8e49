// Package sqserr is the single table of SQS errors the gateway can return, with the
// codes and HTTP statuses of both wire protocols, and the error value that carries one.
package sqserr

import "fmt"

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

// The codes. Keep this list and table in step; a test checks the table for duplicates.
const (
	AccessDenied                 Code = "AccessDeniedException"
	BatchEntryIdsNotDistinct     Code = "BatchEntryIdsNotDistinct"
	BatchRequestTooLong          Code = "BatchRequestTooLong"
	EmptyBatchRequest            Code = "EmptyBatchRequest"
	InternalError                Code = "InternalError"
	InvalidAction                Code = "InvalidAction"
	InvalidAddress               Code = "InvalidAddress"
	InvalidAttributeName         Code = "InvalidAttributeName"
	InvalidAttributeValue        Code = "InvalidAttributeValue"
	InvalidBatchEntryID          Code = "InvalidBatchEntryId"
	InvalidIDFormat              Code = "InvalidIdFormat"
	InvalidMessageContents       Code = "InvalidMessageContents"
	InvalidParameterValue        Code = "InvalidParameterValue"
	InvalidSecurity              Code = "InvalidSecurity"
	MessageNotInflight           Code = "MessageNotInflight"
	MissingParameter             Code = "MissingParameter"
	OverLimit                    Code = "OverLimit"
	PurgeQueueInProgress         Code = "PurgeQueueInProgress"
	QueueDeletedRecently         Code = "QueueDeletedRecently"
	QueueDoesNotExist            Code = "QueueDoesNotExist"
	QueueNameExists              Code = "QueueNameExists"
	ReceiptHandleIsInvalid       Code = "ReceiptHandleIsInvalid"
	RequestThrottled             Code = "RequestThrottled"
	ResourceNotFound             Code = "ResourceNotFoundException"
	ServiceUnavailable           Code = "ServiceUnavailable"
	TooManyEntriesInBatchRequest Code = "TooManyEntriesInBatchRequest"
	UnsupportedOperation         Code = "UnsupportedOperation"
	ValidationError              Code = "ValidationException"
)

// Error is an SQS error returned by the gateway.
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// New returns an *Error with a formatted message.
func New(c Code, format string, args ...any) *Error {
	return &Error{Code: c, Message: fmt.Sprintf(format, args...)}
}
