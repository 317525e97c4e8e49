package message

import (
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
	"github.com/anysqs/anysqs/gateway/sqserr"
)

// Base data types of message attributes; a DataType may add ".label".
const (
	typeString = "String"
	typeNumber = "Number"
	typeBinary = "Binary"
)

// Limits of Number attribute values, as the SQS developer guide gives them.
const (
	maxNumberDigits      = 38
	minNumberExponent    = -128 // smallest magnitude 10^-128
	maxNumberExponent    = 126  // largest magnitude 10^+126
	maxExponentFieldSize = 6    // exponent digits beyond this are out of range anyway
)

// baseType returns String, Number or Binary for a DataType, or "" if it has none of
// those prefixes followed by nothing or by ".".
func baseType(dataType string) string {
	for _, b := range []string{typeString, typeNumber, typeBinary} {
		if dataType == b || strings.HasPrefix(dataType, b+".") {
			return b
		}
	}
	return ""
}

func invalidParam(format string, args ...any) error {
	return sqserr.New(sqserr.InvalidParameterValue, format, args...)
}

// ValidateAttributes checks a message's attributes: at most 10; names of at most 256
// letters, digits, hyphens, underscores and periods, not starting with "AWS." or
// "Amazon." (any case), not starting or ending with a period, without consecutive
// periods; a DataType of String, Number or Binary with an optional ".label" (256
// characters in all); and a non-empty value of the type's kind: String values with the
// message body's characters, Number values numeric (38 significant digits, magnitude
// between 10^-128 and 10^+126).
func ValidateAttributes(attrs map[string]drivers.MessageAttribute) error {
	if len(attrs) > sqsrule.MaxMessageAttributes {
		return invalidParam("Number of message attributes [%d] exceeds the allowed maximum [%d].", len(attrs), sqsrule.MaxMessageAttributes)
	}
	for _, name := range sortedNames(attrs) {
		if err := validateAttributeName(name); err != nil {
			return err
		}
		if err := validateAttributeValue(name, attrs[name]); err != nil {
			return err
		}
	}
	return nil
}

func validateAttributeName(name string) error {
	if name == "" {
		return invalidParam("The request must contain non-empty message (user) attribute names.")
	}
	if len(name) > MaxAttributeNameLength {
		return invalidParam("Message (user) attribute name %s is invalid. Reason: it must be at most %d characters long.", name, MaxAttributeNameLength)
	}
	for _, r := range name {
		// SQS takes letters and digits of any script (attr.1øßä), not ASCII only.
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '.') {
			// SQS's wording, "lower score" and trailing space included.
			return invalidParam("Message (user) attributes name can only contain upper and lower score characters, digits, periods, hyphens and underscores. ")
		}
	}
	lower := strings.ToLower(name)
	if strings.HasPrefix(lower, "aws.") || strings.HasPrefix(lower, "amazon.") || name[0] == '.' || name[len(name)-1] == '.' {
		return invalidParam("You can't use message attribute names beginning with 'AWS.' or 'Amazon.'. These strings are reserved for internal use. Additionally, they cannot start or end with '.'.")
	}
	if strings.Contains(name, "..") {
		return invalidParam("Message (user) attribute name can not have successive '.' characters.")
	}
	return nil
}

func validateAttributeValue(name string, a drivers.MessageAttribute) error {
	if a.DataType == "" {
		return invalidParam("The message attribute '%s' must contain non-empty message attribute type.", name)
	}
	base := baseType(a.DataType)
	if base == "" || a.DataType == base+"." {
		return invalidParam("The message attribute '%s' has an invalid message attribute type, the set of supported type prefixes is Binary, Number, and String.", name)
	}
	if len(a.DataType) > MaxDataTypeLength {
		return invalidParam("Message (user) attribute '%s' type must be at most %d characters long.", name, MaxDataTypeLength)
	}
	if _, ok := firstInvalidRune(a.DataType); !ok {
		return invalidParam("Message (user) attribute '%s' type contains invalid characters.", name)
	}
	if base == typeBinary {
		if a.StringValue != "" {
			return invalidParam("The message attribute '%s' with type 'Binary' must use field 'Binary'.", name)
		}
		if len(a.BinaryValue) == 0 {
			return invalidParam("Message (user) attribute '%s' must contain a non-empty value of type 'Binary'.", name)
		}
		return nil
	}
	if len(a.BinaryValue) > 0 {
		return invalidParam("The message attribute '%s' with type '%s' must use field 'String'.", name, base)
	}
	if a.StringValue == "" {
		return invalidParam("Message (user) attribute '%s' must contain a non-empty value of type '%s'.", name, base)
	}
	if base == typeNumber {
		return validateNumber(name, a.StringValue)
	}
	if r, ok := firstInvalidRune(a.StringValue); !ok {
		return invalidParam("Invalid binary character '#x%X' was found in the message attribute '%s' value, the set of allowed characters is #x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF", r, name)
	}
	return nil
}

// validateNumber accepts a decimal number, optionally signed, with an optional fraction
// and exponent, of at most 38 significant digits and a magnitude of zero or between
// 10^-128 and 10^+126.
func validateNumber(name, v string) error {
	digits, point, exp, ok := splitNumber(v)
	if !ok {
		return invalidParam("Can't cast the value of message (user) attribute '%s' to a number.", name)
	}
	first := strings.IndexFunc(digits, func(r rune) bool { return r != '0' })
	if first < 0 {
		return nil // zero
	}
	significant := strings.TrimRight(digits[first:], "0")
	// The first significant digit stands for 10^m.
	m := point - first - 1 + exp
	tooBig := m > maxNumberExponent || m == maxNumberExponent && significant != "1"
	if len(significant) > maxNumberDigits || m < minNumberExponent || tooBig {
		return invalidParam("Value %s for message (user) attribute '%s' is out of range: a Number has at most %d significant digits and a magnitude between 10^-128 and 10^+126.", v, name, maxNumberDigits)
	}
	return nil
}

// splitNumber parses [+-]digits[.digits][(e|E)[+-]digits] into its digits without the
// point, the number of digits before the point, and the exponent.
func splitNumber(v string) (digits string, point, exp int, ok bool) {
	s := strings.TrimLeft(v, "+-")
	if len(v)-len(s) > 1 {
		return "", 0, 0, false
	}
	mantissa, expPart, hasExp := strings.Cut(strings.ToLower(s), "e")
	intPart, fracPart, _ := strings.Cut(mantissa, ".")
	if intPart == "" && fracPart == "" || !allDigits(intPart) || !allDigits(fracPart) {
		return "", 0, 0, false
	}
	if hasExp {
		e := strings.TrimLeft(expPart, "+-")
		if len(expPart)-len(e) > 1 || e == "" || !allDigits(e) || len(e) > maxExponentFieldSize {
			return "", 0, 0, false
		}
		n, err := strconv.Atoi(expPart)
		if err != nil {
			return "", 0, 0, false
		}
		exp = n
	}
	return intPart + fracPart, len(intPart), exp, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// ValidateSystemAttributes checks message system attributes: SQS lets a sender set only
// AWSTraceHeader, of type String, with a non-empty value.
func ValidateSystemAttributes(attrs map[string]drivers.MessageAttribute) error {
	for _, name := range sortedNames(attrs) {
		a := attrs[name]
		if name != AWSTraceHeader {
			return invalidParam("Message system attribute name '%s' is invalid.", name)
		}
		if a.DataType != typeString {
			return invalidParam("The message system attribute '%s' must have type 'String'.", name)
		}
		if a.StringValue == "" || len(a.BinaryValue) > 0 {
			return invalidParam("Message system attribute '%s' must contain a non-empty value of type 'String'.", name)
		}
		if _, ok := firstInvalidRune(a.StringValue); !ok {
			return invalidParam("Message system attribute '%s' value contains invalid characters.", name)
		}
	}
	return nil
}

func sortedNames(attrs map[string]drivers.MessageAttribute) []string {
	names := make([]string, 0, len(attrs))
	for n := range attrs {
		names = append(names, n)
	}
	sort.Strings(names) // byte order: stable errors, and the order the MD5 digest needs
	return names
}
