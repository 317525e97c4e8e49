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
	IncompleteSignature          Code = "IncompleteSignature"
	InternalError                Code = "InternalError"
	InvalidAction                Code = "InvalidAction"
	InvalidAddress               Code = "InvalidAddress"
	InvalidAttributeName         Code = "InvalidAttributeName"
	InvalidAttributeValue        Code = "InvalidAttributeValue"
	InvalidBatchEntryID          Code = "InvalidBatchEntryId"
	InvalidClientTokenID         Code = "InvalidClientTokenId"
	InvalidIDFormat              Code = "InvalidIdFormat"
	InvalidMessageContents       Code = "InvalidMessageContents"
	InvalidParameterValue        Code = "InvalidParameterValue"
	InvalidSecurity              Code = "InvalidSecurity"
	MessageNotInflight           Code = "MessageNotInflight"
	MissingAuthenticationToken   Code = "MissingAuthenticationToken"
	MissingParameter             Code = "MissingParameter"
	OverLimit                    Code = "OverLimit"
	PurgeQueueInProgress         Code = "PurgeQueueInProgress"
	QueueDeletedRecently         Code = "QueueDeletedRecently"
	QueueDoesNotExist            Code = "QueueDoesNotExist"
	QueueNameExists              Code = "QueueNameExists"
	ReceiptHandleIsInvalid       Code = "ReceiptHandleIsInvalid"
	RequestExpired               Code = "RequestExpired"
	RequestThrottled             Code = "RequestThrottled"
	ResourceNotFound             Code = "ResourceNotFoundException"
	ServiceUnavailable           Code = "ServiceUnavailable"
	SignatureDoesNotMatch        Code = "SignatureDoesNotMatch"
	TooManyEntriesInBatchRequest Code = "TooManyEntriesInBatchRequest"
	UnsupportedOperation         Code = "UnsupportedOperation"
	ValidationError              Code = "ValidationException"
)

// Specs is the wire rendering of every Code. HTTP statuses and Query codes follow the SQS
// Smithy model (aws-sdk-go-v2 service/sqs schemas, botocore service-2.json); codes the model
// leaves out (the AWS common errors) use the API reference's common-errors page.
var Specs = map[Code]Spec{
	AccessDenied:               {AccessDenied, "AccessDenied", 403, true},
	BatchEntryIdsNotDistinct:   {BatchEntryIdsNotDistinct, "AWS.SimpleQueueService.BatchEntryIdsNotDistinct", 400, true},
	BatchRequestTooLong:        {BatchRequestTooLong, "AWS.SimpleQueueService.BatchRequestTooLong", 400, true},
	EmptyBatchRequest:          {EmptyBatchRequest, "AWS.SimpleQueueService.EmptyBatchRequest", 400, true},
	IncompleteSignature:        {IncompleteSignature, "IncompleteSignature", 400, true},
	InternalError:              {InternalError, "InternalError", 500, false},
	InvalidAction:              {InvalidAction, "InvalidAction", 400, true},
	InvalidAddress:             {InvalidAddress, "InvalidAddress", 404, true},
	InvalidAttributeName:       {InvalidAttributeName, "InvalidAttributeName", 400, true},
	InvalidAttributeValue:      {InvalidAttributeValue, "InvalidAttributeValue", 400, true},
	InvalidBatchEntryID:        {InvalidBatchEntryID, "AWS.SimpleQueueService.InvalidBatchEntryId", 400, true},
	InvalidClientTokenID:       {InvalidClientTokenID, "InvalidClientTokenId", 403, true},
	InvalidIDFormat:            {InvalidIDFormat, "InvalidIdFormat", 400, true},
	InvalidMessageContents:     {InvalidMessageContents, "InvalidMessageContents", 400, true},
	InvalidParameterValue:      {InvalidParameterValue, "InvalidParameterValue", 400, true},
	InvalidSecurity:            {InvalidSecurity, "InvalidSecurity", 403, true},
	MessageNotInflight:         {MessageNotInflight, "AWS.SimpleQueueService.MessageNotInflight", 400, true},
	MissingAuthenticationToken: {MissingAuthenticationToken, "MissingAuthenticationToken", 403, true},
	MissingParameter:           {MissingParameter, "MissingParameter", 400, true},
	OverLimit:                  {OverLimit, "OverLimit", 403, true},
	PurgeQueueInProgress:       {PurgeQueueInProgress, "AWS.SimpleQueueService.PurgeQueueInProgress", 403, true},
	QueueDeletedRecently:       {QueueDeletedRecently, "AWS.SimpleQueueService.QueueDeletedRecently", 400, true},
	QueueDoesNotExist:          {QueueDoesNotExist, "AWS.SimpleQueueService.NonExistentQueue", 400, true},
	QueueNameExists:            {QueueNameExists, "QueueAlreadyExists", 400, true},
	ReceiptHandleIsInvalid:     {ReceiptHandleIsInvalid, "ReceiptHandleIsInvalid", 404, true},
	RequestExpired:             {RequestExpired, "RequestExpired", 400, true},
	RequestThrottled:           {RequestThrottled, "RequestThrottled", 403, true},
	ResourceNotFound:           {ResourceNotFound, "ResourceNotFoundException", 404, true},
	ServiceUnavailable:         {ServiceUnavailable, "ServiceUnavailable", 503, false},
	// Not in the common-errors page, but what SQS answers a wrong signature with.
	SignatureDoesNotMatch:        {SignatureDoesNotMatch, "SignatureDoesNotMatch", 403, true},
	TooManyEntriesInBatchRequest: {TooManyEntriesInBatchRequest, "AWS.SimpleQueueService.TooManyEntriesInBatchRequest", 400, true},
	UnsupportedOperation:         {UnsupportedOperation, "AWS.SimpleQueueService.UnsupportedOperation", 400, true},
	ValidationError:              {ValidationError, "ValidationError", 400, true},
}

// AllCodes lists every Code constant, so tests can check Specs covers them.
var AllCodes = []Code{AccessDenied, BatchEntryIdsNotDistinct, BatchRequestTooLong, EmptyBatchRequest,
	IncompleteSignature, InternalError, InvalidAction, InvalidAddress, InvalidAttributeName,
	InvalidAttributeValue, InvalidBatchEntryID, InvalidClientTokenID, InvalidIDFormat,
	InvalidMessageContents, InvalidParameterValue, InvalidSecurity, MessageNotInflight,
	MissingAuthenticationToken, MissingParameter, OverLimit, PurgeQueueInProgress, QueueDeletedRecently,
	QueueDoesNotExist, QueueNameExists, ReceiptHandleIsInvalid, RequestExpired, RequestThrottled,
	ResourceNotFound, ServiceUnavailable, SignatureDoesNotMatch, TooManyEntriesInBatchRequest,
	UnsupportedOperation, ValidationError}

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
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// New returns an *Error with a formatted message.
func New(c Code, format string, args ...any) *Error {
	return &Error{Code: c, Message: fmt.Sprintf(format, args...)}
}
