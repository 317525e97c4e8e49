// Package message validates SQS messages (body, attributes, FIFO ids, batch entry ids)
// and computes what SQS computes about them: the size counted against
// MaximumMessageSize, the MD5 digests the SDKs verify, and the content-based
// deduplication id.
//
// Every error is a *sqserr.Error with the code and message SQS uses.
package message

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"unicode/utf8"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
	"github.com/anysqs/anysqs/gateway/sqserr"
)

// Limits of messages, as the SQS API reference gives them.
const (
	// BatchSizeLimit is the largest total payload of one SendMessageBatch: the sum of the
	// sizes of its messages. SQS raised it with the largest message
	// (sqsrule.MaxMessageSize).
	BatchSizeLimit = sqsrule.MaxMessageSize
	// MaxBatchEntryIDLength bounds a batch entry id.
	MaxBatchEntryIDLength = 80
	// MaxAttributeNameLength and MaxDataTypeLength bound an attribute's name and data
	// type (custom label included).
	MaxAttributeNameLength = 256
	MaxDataTypeLength      = 256
	// MaxFIFOIDLength bounds MessageGroupId, MessageDeduplicationId and
	// ReceiveRequestAttemptId.
	MaxFIFOIDLength = 128
	// AWSTraceHeader is the only message system attribute a sender may set.
	AWSTraceHeader = "AWSTraceHeader"
)

// ValidateBody checks that body is present and holds only the characters SQS allows:
// #x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF.
func ValidateBody(body string) error {
	if body == "" {
		return sqserr.New(sqserr.MissingParameter, "The request must contain the parameter MessageBody.")
	}
	if r, ok := firstInvalidRune(body); !ok {
		return sqserr.New(sqserr.InvalidMessageContents,
			"Invalid binary character '#x%X' was found in the message body, the set of allowed characters is #x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF", r)
	}
	return nil
}

// firstInvalidRune returns the first character outside SQS's set; ok is true if there
// is none. Bytes that are not UTF-8 count as invalid and are reported as U+FFFD.
func firstInvalidRune(s string) (rune, bool) {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			return r, false
		}
		if !allowedRune(r) {
			return r, false
		}
		i += n
	}
	return 0, true
}

func allowedRune(r rune) bool {
	switch {
	case r == 0x9 || r == 0xA || r == 0xD:
		return true
	case r >= 0x20 && r <= 0xD7FF:
		return true
	case r >= 0xE000 && r <= 0xFFFD:
		return true
	case r >= 0x10000 && r <= 0x10FFFF:
		return true
	}
	return false
}

// Size returns the bytes SQS counts against MaximumMessageSize: the body plus, for each
// message attribute, its name, data type and value. System attributes do not count.
func Size(body string, attrs map[string]drivers.MessageAttribute) int {
	n := len(body)
	for name, a := range attrs {
		n += len(name) + len(a.DataType) + len(a.StringValue) + len(a.BinaryValue)
	}
	return n
}

// CheckSize fails when a message of size bytes exceeds the queue's MaximumMessageSize.
func CheckSize(size int, maximum int32) error {
	if size > int(maximum) {
		return sqserr.New(sqserr.InvalidParameterValue,
			"One or more parameters are invalid. Reason: Message must be shorter than %d bytes.", maximum)
	}
	return nil
}

// CheckBatchSize fails when the messages of one SendMessageBatch total more than
// BatchSizeLimit bytes.
func CheckBatchSize(total int) error {
	if total > BatchSizeLimit {
		return sqserr.New(sqserr.BatchRequestTooLong,
			"Batch requests cannot be longer than %d bytes. You have sent %d bytes.", BatchSizeLimit, total)
	}
	return nil
}

// MD5OfBody returns the hex MD5 of the body's UTF-8 bytes (MD5OfMessageBody, MD5OfBody).
func MD5OfBody(body string) string {
	sum := md5.Sum([]byte(body))
	return hex.EncodeToString(sum[:])
}

// Transport type bytes of the attribute digest: String and Number travel as strings,
// Binary as bytes.
const (
	transportString byte = 1
	transportBinary byte = 2
)

// MD5OfAttributes returns the digest SQS returns as MD5OfMessageAttributes (and, over
// system attributes, MD5OfMessageSystemAttributes), or "" when there are none. For each
// attribute in ascending name order it hashes the name and the data type, each as a
// 4-byte big-endian length and its UTF-8 bytes, then the transport type byte, then the
// value as a 4-byte length and its bytes.
func MD5OfAttributes(attrs map[string]drivers.MessageAttribute) string {
	if len(attrs) == 0 {
		return ""
	}
	h := md5.New()
	for _, n := range sortedNames(attrs) {
		a := attrs[n]
		writeField(h, []byte(n))
		writeField(h, []byte(a.DataType))
		if baseType(a.DataType) == typeBinary {
			h.Write([]byte{transportBinary})
			writeField(h, a.BinaryValue)
		} else {
			h.Write([]byte{transportString})
			writeField(h, []byte(a.StringValue))
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

func writeField(h interface{ Write([]byte) (int, error) }, b []byte) {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(b)))
	h.Write(n[:])
	h.Write(b)
}

// ContentDedupID returns the deduplication id SQS derives from a body when the queue has
// ContentBasedDeduplication: the hex SHA-256 of the body.
func ContentDedupID(body string) string {
	sum := sha256.Sum256([]byte(body))
	return hex.EncodeToString(sum[:])
}
