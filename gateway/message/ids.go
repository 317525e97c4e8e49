package message

import (
	"github.com/anysqs/anysqs/drivers/sqsrule"
	"github.com/anysqs/anysqs/gateway/sqserr"
)

// ValidateBatchIDs checks the entry ids of a batch request: 1 to 10 entries, each id 1 to
// 80 letters, digits, hyphens and underscores, no id twice.
func ValidateBatchIDs(ids []string) error {
	return ValidateBatchIDsFor("", ids)
}

// ValidateBatchIDsFor is ValidateBatchIDs for a named action ("SendMessageBatch",
// "DeleteMessageBatch", "ChangeMessageVisibilityBatch"), whose name SQS puts in the
// message for an empty batch.
func ValidateBatchIDsFor(action string, ids []string) error {
	if len(ids) == 0 {
		if action == "" {
			return sqserr.New(sqserr.EmptyBatchRequest, "There should be at least one RequestEntry in the request.")
		}
		return sqserr.New(sqserr.EmptyBatchRequest, "There should be at least one %sRequestEntry in the request.", action)
	}
	if len(ids) > sqsrule.MaxBatchEntries {
		return sqserr.New(sqserr.TooManyEntriesInBatchRequest,
			"Maximum number of entries per request are %d. You have sent %d.", sqsrule.MaxBatchEntries, len(ids))
	}
	for _, id := range ids {
		if !validBatchEntryID(id) {
			return sqserr.New(sqserr.InvalidBatchEntryID,
				"A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.")
		}
	}
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			return sqserr.New(sqserr.BatchEntryIdsNotDistinct, "Id %s repeated.", id)
		}
		seen[id] = true
	}
	return nil
}

func validBatchEntryID(id string) bool {
	if id == "" || len(id) > MaxBatchEntryIDLength {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// ValidateGroupID checks a MessageGroupId: 1 to 128 letters, digits and ASCII
// punctuation. The gateway decides whether the id is required.
func ValidateGroupID(id string) error { return validateFIFOID("MessageGroupId", id) }

// ValidateDedupID checks a MessageDeduplicationId by the same rule.
func ValidateDedupID(id string) error { return validateFIFOID("MessageDeduplicationId", id) }

// ValidateReceiveAttemptID checks a ReceiveRequestAttemptId by the same rule.
func ValidateReceiveAttemptID(id string) error { return validateFIFOID("ReceiveRequestAttemptId", id) }

// validateFIFOID accepts 1 to 128 characters from the letters, digits and punctuation
// !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~, which together are exactly printable ASCII without
// the space.
func validateFIFOID(param, id string) error {
	ok := id != "" && len(id) <= MaxFIFOIDLength
	for i := 0; ok && i < len(id); i++ {
		ok = id[i] > ' ' && id[i] <= '~'
	}
	if !ok {
		return sqserr.New(sqserr.InvalidParameterValue,
			"Value %s for parameter %s is invalid. Reason: %s can only include alphanumeric and punctuation characters. 1 to 128 in length.",
			id, param, param)
	}
	return nil
}
