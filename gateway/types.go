package gateway

// The normalised request and response shapes. They are the AWS JSON 1.0 shapes of the SQS
// model: JSON requests decode into them directly, Query requests are first rewritten into
// the same JSON (see query.go), and responses render from them into either JSON or XML.
// Pointers mark optional scalars whose absence differs from zero. The sqsxml tag names the
// flattened Query XML elements of list and map members (see renderXML).

import "github.com/anysqs/anysqs/gateway/sqserr"

type queueURLInput struct {
	QueueUrl string `json:"QueueUrl"`
}

type createQueueInput struct {
	QueueName  string            `json:"QueueName"`
	Attributes map[string]string `json:"Attributes"`
	Tags       map[string]string `json:"tags"`
}

type queueURLOutput struct {
	QueueUrl string `json:"QueueUrl"`
}

type getQueueURLInput struct {
	QueueName              string `json:"QueueName"`
	QueueOwnerAWSAccountId string `json:"QueueOwnerAWSAccountId"`
}

type listQueuesInput struct {
	QueueNamePrefix string `json:"QueueNamePrefix"`
	NextToken       string `json:"NextToken"`
	MaxResults      *int32 `json:"MaxResults"`
}

type listQueuesOutput struct {
	QueueUrls []string `json:"QueueUrls,omitempty" sqsxml:"QueueUrl"`
	NextToken string   `json:"NextToken,omitempty"`
}

type listDLQSourcesInput struct {
	QueueUrl   string `json:"QueueUrl"`
	NextToken  string `json:"NextToken"`
	MaxResults *int32 `json:"MaxResults"`
}

type listDLQSourcesOutput struct {
	QueueUrls []string `json:"queueUrls" sqsxml:"QueueUrl"`
	NextToken string   `json:"NextToken,omitempty"`
}

type getQueueAttributesInput struct {
	QueueUrl       string   `json:"QueueUrl"`
	AttributeNames []string `json:"AttributeNames"`
}

type attributesOutput struct {
	Attributes map[string]string `json:"Attributes,omitempty" sqsxml:"Attribute,Name,Value"`
}

type setQueueAttributesInput struct {
	QueueUrl   string            `json:"QueueUrl"`
	Attributes map[string]string `json:"Attributes"`
}

type tagQueueInput struct {
	QueueUrl string            `json:"QueueUrl"`
	Tags     map[string]string `json:"Tags"`
}

type untagQueueInput struct {
	QueueUrl string   `json:"QueueUrl"`
	TagKeys  []string `json:"TagKeys"`
}

type tagsOutput struct {
	Tags map[string]string `json:"Tags,omitempty" sqsxml:"Tag,Key,Value"`
}

// messageAttributeValue is the wire form of a message (system) attribute value.
// Binary values are base64 in both protocols, which encoding/json does for []byte.
type messageAttributeValue struct {
	StringValue      *string  `json:"StringValue,omitempty"`
	BinaryValue      []byte   `json:"BinaryValue,omitempty"`
	StringListValues []string `json:"StringListValues,omitempty" sqsxml:"StringListValue"`
	BinaryListValues [][]byte `json:"BinaryListValues,omitempty" sqsxml:"BinaryListValue"`
	DataType         string   `json:"DataType"`
}

type sendMessageInput struct {
	QueueUrl string `json:"QueueUrl"`
	sendFields
}

// sendFields are the members SendMessage shares with a SendMessageBatch entry.
type sendFields struct {
	MessageBody             *string                          `json:"MessageBody"`
	DelaySeconds            *int32                           `json:"DelaySeconds"`
	MessageAttributes       map[string]messageAttributeValue `json:"MessageAttributes"`
	MessageSystemAttributes map[string]messageAttributeValue `json:"MessageSystemAttributes"`
	MessageDeduplicationId  string                           `json:"MessageDeduplicationId"`
	MessageGroupId          *string                          `json:"MessageGroupId"` // nil: absent; SQS rejects an empty one
}

type sendMessageOutput struct {
	MD5OfMessageBody             string `json:"MD5OfMessageBody"`
	MD5OfMessageAttributes       string `json:"MD5OfMessageAttributes,omitempty"`
	MD5OfMessageSystemAttributes string `json:"MD5OfMessageSystemAttributes,omitempty"`
	MessageId                    string `json:"MessageId"`
	SequenceNumber               string `json:"SequenceNumber,omitempty"`
}

type sendBatchEntry struct {
	Id string `json:"Id"`
	sendFields
}

type sendMessageBatchInput struct {
	QueueUrl string           `json:"QueueUrl"`
	Entries  []sendBatchEntry `json:"Entries"`
}

type sendBatchResultEntry struct {
	Id string `json:"Id"`
	sendMessageOutput
}

type batchErrorEntry struct {
	Id          string `json:"Id"`
	SenderFault bool   `json:"SenderFault"`
	Code        string `json:"Code"`
	Message     string `json:"Message,omitempty"`
	// fault is the *sqserr.Error of an entry that failed by the backend's fault, not
	// the sender's, for the log (see logEntryFaults); it is not part of the response.
	fault *sqserr.Error
}

type sendMessageBatchOutput struct {
	Successful []sendBatchResultEntry `json:"Successful" sqsxml:"SendMessageBatchResultEntry"`
	Failed     []batchErrorEntry      `json:"Failed" sqsxml:"BatchResultErrorEntry"`
}

type receiveMessageInput struct {
	QueueUrl                    string   `json:"QueueUrl"`
	AttributeNames              []string `json:"AttributeNames"`
	MessageSystemAttributeNames []string `json:"MessageSystemAttributeNames"`
	MessageAttributeNames       []string `json:"MessageAttributeNames"`
	MaxNumberOfMessages         *int32   `json:"MaxNumberOfMessages"`
	VisibilityTimeout           *int32   `json:"VisibilityTimeout"`
	WaitTimeSeconds             *int32   `json:"WaitTimeSeconds"`
	ReceiveRequestAttemptId     string   `json:"ReceiveRequestAttemptId"`
}

type messageOutput struct {
	MessageId              string                           `json:"MessageId"`
	ReceiptHandle          string                           `json:"ReceiptHandle"`
	MD5OfBody              string                           `json:"MD5OfBody"`
	Body                   string                           `json:"Body"`
	Attributes             map[string]string                `json:"Attributes,omitempty" sqsxml:"Attribute,Name,Value"`
	MD5OfMessageAttributes string                           `json:"MD5OfMessageAttributes,omitempty"`
	MessageAttributes      map[string]messageAttributeValue `json:"MessageAttributes,omitempty" sqsxml:"MessageAttribute,Name,Value"`
}

type receiveMessageOutput struct {
	Messages []messageOutput `json:"Messages,omitempty" sqsxml:"Message"`
}

type deleteMessageInput struct {
	QueueUrl      string `json:"QueueUrl"`
	ReceiptHandle string `json:"ReceiptHandle"`
}

type deleteBatchEntry struct {
	Id            string `json:"Id"`
	ReceiptHandle string `json:"ReceiptHandle"`
}

type deleteMessageBatchInput struct {
	QueueUrl string             `json:"QueueUrl"`
	Entries  []deleteBatchEntry `json:"Entries"`
}

type idEntry struct {
	Id string `json:"Id"`
}

type deleteMessageBatchOutput struct {
	Successful []idEntry         `json:"Successful" sqsxml:"DeleteMessageBatchResultEntry"`
	Failed     []batchErrorEntry `json:"Failed" sqsxml:"BatchResultErrorEntry"`
}

type changeVisibilityInput struct {
	QueueUrl          string `json:"QueueUrl"`
	ReceiptHandle     string `json:"ReceiptHandle"`
	VisibilityTimeout *int32 `json:"VisibilityTimeout"`
}

type changeVisibilityBatchEntry struct {
	Id                string `json:"Id"`
	ReceiptHandle     string `json:"ReceiptHandle"`
	VisibilityTimeout *int32 `json:"VisibilityTimeout"`
}

type changeVisibilityBatchInput struct {
	QueueUrl string                       `json:"QueueUrl"`
	Entries  []changeVisibilityBatchEntry `json:"Entries"`
}

type changeVisibilityBatchOutput struct {
	Successful []idEntry         `json:"Successful" sqsxml:"ChangeMessageVisibilityBatchResultEntry"`
	Failed     []batchErrorEntry `json:"Failed" sqsxml:"BatchResultErrorEntry"`
}

type startMoveTaskInput struct {
	SourceArn                    string `json:"SourceArn"`
	DestinationArn               string `json:"DestinationArn"`
	MaxNumberOfMessagesPerSecond *int32 `json:"MaxNumberOfMessagesPerSecond"`
}

type taskHandleOutput struct {
	TaskHandle string `json:"TaskHandle"`
}

type cancelMoveTaskInput struct {
	TaskHandle string `json:"TaskHandle"`
}

type cancelMoveTaskOutput struct {
	ApproximateNumberOfMessagesMoved int64 `json:"ApproximateNumberOfMessagesMoved"`
}

type listMoveTasksInput struct {
	SourceArn  string `json:"SourceArn"`
	MaxResults *int32 `json:"MaxResults"`
}

type moveTaskEntry struct {
	TaskHandle                        string `json:"TaskHandle,omitempty"`
	Status                            string `json:"Status"`
	SourceArn                         string `json:"SourceArn"`
	DestinationArn                    string `json:"DestinationArn,omitempty"`
	MaxNumberOfMessagesPerSecond      *int32 `json:"MaxNumberOfMessagesPerSecond,omitempty"`
	ApproximateNumberOfMessagesMoved  int64  `json:"ApproximateNumberOfMessagesMoved"`
	ApproximateNumberOfMessagesToMove *int64 `json:"ApproximateNumberOfMessagesToMove,omitempty"`
	FailureReason                     string `json:"FailureReason,omitempty"`
	StartedTimestamp                  int64  `json:"StartedTimestamp"`
}

type listMoveTasksOutput struct {
	Results []moveTaskEntry `json:"Results" sqsxml:"ListMessageMoveTasksResultEntry"`
}
