package policy

import (
	"strings"
	"testing"
)

const polARN = "arn:aws:sqs:us-east-1:000000000001:orders"

func TestAllowedByPolicy(t *testing.T) {
	t.Parallel()
	allow := func(principal, action, resource string) string {
		return `{"Effect":"Allow","Principal":` + principal + `,"Action":` + action + `,"Resource":` + resource + `}`
	}
	doc := func(stmts ...string) string {
		return `{"Version":"2012-10-17","Statement":[` + strings.Join(stmts, ",") + `]}`
	}
	cases := []struct {
		name, doc, account, action string
		want                       bool
	}{
		{"root arn, exact action", doc(allow(`{"AWS":"arn:aws:iam::000000000002:root"}`, `"SQS:SendMessage"`, `"`+polARN+`"`)), "000000000002", "SendMessage", true},
		{"other action", doc(allow(`{"AWS":"arn:aws:iam::000000000002:root"}`, `"SQS:SendMessage"`, `"`+polARN+`"`)), "000000000002", "ReceiveMessage", false},
		{"other account", doc(allow(`{"AWS":"000000000002"}`, `"sqs:*"`, `"`+polARN+`"`)), "000000000003", "SendMessage", false},
		{"account id, wildcard action", doc(allow(`{"AWS":["000000000003","000000000002"]}`, `"sqs:*"`, `"*"`)), "000000000002", "PurgeQueue", true},
		{"star principal", doc(allow(`"*"`, `["sqs:Receive*","sqs:DeleteMessage"]`, `"arn:aws:sqs:*:*:ord?rs"`)), "000000000009", "ReceiveMessage", true},
		{"action case", doc(allow(`{"AWS":"*"}`, `"SQS:sendmessage"`, `"`+polARN+`"`)), "000000000002", "SendMessage", true},
		{"resource mismatch", doc(allow(`"*"`, `"*"`, `"arn:aws:sqs:us-east-1:000000000001:other"`)), "000000000002", "SendMessage", false},
		{"deny wins", doc(allow(`"*"`, `"sqs:*"`, `"*"`), `{"Effect":"Deny","Principal":{"AWS":"000000000002"},"Action":"sqs:SendMessage","Resource":"*"}`), "000000000002", "SendMessage", false},
		{"deny of another action", doc(allow(`"*"`, `"sqs:*"`, `"*"`), `{"Effect":"Deny","Principal":{"AWS":"000000000002"},"Action":"sqs:PurgeQueue","Resource":"*"}`), "000000000002", "SendMessage", true},
		{"one statement as object", `{"Statement":` + allow(`"*"`, `"sqs:SendMessage"`, `"*"`) + `}`, "000000000002", "SendMessage", true},
		{"no statements", doc(), "000000000002", "SendMessage", false},
		{"empty policy", "", "000000000002", "SendMessage", false},
		{"a bracket is literal", doc(allow(`"*"`, `"sqs:[S]endMessage"`, `"*"`)), "000000000002", "SendMessage", false},
		// Terraform's SNS subscription grant: no caller of a gateway is the service.
		{"service principal allows no caller", doc(allow(`{"Service":"sns.amazonaws.com"}`, `"sqs:SendMessage"`, `"`+polARN+`"`)), "000000000002", "SendMessage", false},
		{"service beside an account", doc(allow(`{"Service":["sns.amazonaws.com"],"AWS":"000000000002"}`, `"sqs:SendMessage"`, `"*"`)), "000000000002", "SendMessage", true},
		// An unfilled template placeholder: SQS stores it, and it matches no queue.
		{"a resource that is no ARN matches nothing", doc(allow(`"*"`, `"sqs:*"`, `"'$sqs_queue_arn'"`)), "000000000002", "SendMessage", false},
		{"nor does it deny", doc(allow(`"*"`, `"sqs:*"`, `"*"`), `{"Effect":"Deny","Principal":"*","Action":"sqs:*","Resource":"'$sqs_queue_arn'"}`), "000000000002", "SendMessage", true},
		{"beside an ARN", doc(allow(`"*"`, `"sqs:*"`, `["'$sqs_queue_arn'","`+polARN+`"]`)), "000000000002", "SendMessage", true},
		// LocalStack's TEST_POLICY, which AWS accepts (test_set_queue_policy): an ArnEquals
		// on a placeholder equals no ARN, so the statement allows nothing.
		{"an ARN condition on a value that is no ARN matches nothing", doc(`{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"sqs:SendMessage","Resource":"'$sqs_queue_arn'","Condition":{"ArnEquals":{"aws:SourceArn":"'$sns_topic_arn'"}}}`), "000000000002", "SendMessage", false},
		{"nor with a real resource", doc(`{"Effect":"Allow","Principal":"*","Action":"sqs:*","Resource":"*","Condition":{"ArnLike":{"aws:SourceArn":"not-an-arn"}}}`), "000000000002", "SendMessage", false},
		// SQS takes IAM users' and roles' ARNs; every gateway key acts as its account's root.
		{"role principal allows no caller", doc(allow(`{"AWS":"arn:aws:iam::000000000002:role/consumer"}`, `"sqs:*"`, `"*"`)), "000000000002", "SendMessage", false},
		{"user principal beside the account", doc(allow(`{"AWS":["arn:aws:iam::000000000002:user/bob","000000000002"]}`, `"sqs:*"`, `"*"`)), "000000000002", "SendMessage", true},
		{"session deny denies no caller", doc(allow(`"*"`, `"sqs:*"`, `"*"`), `{"Effect":"Deny","Principal":{"AWS":"arn:aws:sts::000000000002:assumed-role/r/s"},"Action":"sqs:*","Resource":"*"}`), "000000000002", "SendMessage", true},
		{"service deny denies no caller", doc(allow(`"*"`, `"sqs:*"`, `"*"`), `{"Effect":"Deny","Principal":{"Service":"sns.amazonaws.com"},"Action":"sqs:*","Resource":"*"}`), "000000000002", "SendMessage", true},
	}
	for _, c := range cases {
		if err := CheckQueuePolicy(c.doc); err != nil {
			t.Errorf("%s: CheckQueuePolicy: %v", c.name, err)
		}
		if got := AllowedByPolicy(c.doc, c.account, c.action, polARN, nil); got != c.want {
			t.Errorf("%s: allowed = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestCheckQueuePolicyRefusesWhatItWouldNotEvaluate: what the gateway does not evaluate
// is refused when set, never stored to be ignored.
func TestCheckQueuePolicyRefusesWhatItWouldNotEvaluate(t *testing.T) {
	t.Parallel()
	for name, doc := range map[string]string{
		"not principal":    `{"Statement":[{"Effect":"Deny","NotPrincipal":{"AWS":"000000000002"},"Action":"sqs:*","Resource":"*"}]}`,
		"not action":       `{"Statement":[{"Effect":"Allow","Principal":"*","NotAction":"sqs:PurgeQueue","Resource":"*"}]}`,
		"not resource":     `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"sqs:*","NotResource":"*"}]}`,
		"federated":        `{"Statement":[{"Effect":"Allow","Principal":{"Federated":"cognito-identity.amazonaws.com"},"Action":"sqs:SendMessage","Resource":"*"}]}`,
		"service name":     `{"Statement":[{"Effect":"Allow","Principal":{"Service":"sns"},"Action":"sqs:SendMessage","Resource":"*"}]}`,
		"iam, no identity": `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::000000000002:bob"},"Action":"sqs:*","Resource":"*"}]}`,
		"user name":        `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"bob"},"Action":"sqs:*","Resource":"*"}]}`,
		"other service":    `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"sns:Publish","Resource":"*"}]}`,
		"bad effect":       `{"Statement":[{"Effect":"allow","Principal":"*","Action":"sqs:*","Resource":"*"}]}`,
		"no resource":      `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"sqs:*"}]}`,
		"no principal":     `{"Statement":[{"Effect":"Allow","Action":"sqs:*","Resource":"*"}]}`,
		"unknown member":   `{"Statement":[],"Extra":1}`,
		"not an object":    `[1]`,
		"trailing data":    `{"Statement":[]} {}`,
		"principal string": `{"Statement":[{"Effect":"Allow","Principal":"000000000002","Action":"sqs:*","Resource":"*"}]}`,
	} {
		err := CheckQueuePolicy(doc)
		if err == nil || !strings.Contains(err.Error(), "InvalidAttributeValue") && !strings.Contains(err.Error(), "Invalid value for the parameter Policy") {
			t.Errorf("%s: %v, want InvalidAttributeValue", name, err)
		}
	}
}
