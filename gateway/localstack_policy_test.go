package gateway_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestLocalStackRecordedPolicyCases replays, through the wire, the queue policy cases of
// LocalStack's SQS suite that LocalStack records against AWS itself
// (tests/aws/services/sqs/test_sqs.py: test_set_queue_policy, test_set_empty_queue_policy,
// test_sqs_permission_lifecycle, and their snapshot), and expects what AWS answered.
func TestLocalStackRecordedPolicyCases(t *testing.T) {
	e := newEnv(t)
	call := func(action, body string) (int, string) {
		t.Helper()
		st, _, out := e.jsonCall(action, body)
		return st, out
	}
	ok := func(action, body string) string {
		t.Helper()
		st, out := call(action, body)
		if st != http.StatusOK {
			t.Fatalf("%s %s: %d %s", action, body, st, out)
		}
		return out
	}
	policyOf := func(q string) (map[string]any, bool) {
		t.Helper()
		out := ok("GetQueueAttributes", `{"QueueUrl":"/000000000000/`+q+`","AttributeNames":["All"]}`)
		var r struct{ Attributes map[string]string }
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		p, has := r.Attributes["Policy"]
		if !has {
			return nil, false
		}
		var doc map[string]any
		if err := json.Unmarshal([]byte(p), &doc); err != nil {
			t.Fatalf("stored policy %q: %v", p, err)
		}
		return doc, true
	}
	setPolicy := func(q, policy string) {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"QueueUrl": "/000000000000/" + q, "Attributes": map[string]string{"Policy": policy}})
		ok("SetQueueAttributes", string(b))
	}

	// test_set_queue_policy: placeholders for the queue and topic ARNs, as in a template
	// never filled in. AWS stores the policy.
	const testPolicy = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"*"},
		"Action":"sqs:SendMessage","Resource":"'$sqs_queue_arn'",
		"Condition":{"ArnEquals":{"aws:SourceArn":"'$sns_topic_arn'"}}}]}`
	ok("CreateQueue", `{"QueueName":"set-policy"}`)
	setPolicy("set-policy", testPolicy)
	doc, has := policyOf("set-policy")
	if !has || doc["Statement"].([]any)[0].(map[string]any)["Action"] != "sqs:SendMessage" {
		t.Fatalf("stored policy %v", doc)
	}

	// The policy of LocalStack's CloudFormation templates (resource_providers/templates/
	// sqs_with_queuepolicy*.yml, sqs_with_queueinlinepolicy*.yml), which AWS deploys.
	setPolicy("set-policy", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*",
		"Action":["sqs:SendMessage","sqs:GetQueueAttributes","sqs:GetQueueUrl","sqs:ChangeMessageVisibility",
		"sqs:DeleteMessage","sqs:ReceiveMessage"],"Resource":"arn:aws:sqs:us-east-1:000000000000:set-policy"}]}`)

	// test_set_empty_queue_policy: "" removes the attribute, before and after a policy.
	ok("CreateQueue", `{"QueueName":"empty-policy"}`)
	setPolicy("empty-policy", "")
	if _, has := policyOf("empty-policy"); has {
		t.Fatal("an empty Policy is stored")
	}
	setPolicy("empty-policy", testPolicy)
	setPolicy("empty-policy", "")
	if _, has := policyOf("empty-policy"); has {
		t.Fatal("an empty Policy does not remove the one set")
	}

	// test_sqs_permission_lifecycle.
	const q = `"QueueUrl":"/000000000000/perm"`
	ok("CreateQueue", `{"QueueName":"perm"}`)
	ok("AddPermission", `{`+q+`,"AWSAccountIds":["000000000000","668614515564"],"Actions":["ReceiveMessage"],"Label":"crossaccountpermission"}`)
	doc, _ = policyOf("perm")
	st := doc["Statement"].([]any)[0].(map[string]any)
	principals := st["Principal"].(map[string]any)["AWS"].([]any)
	if doc["Version"] != "2008-10-17" || doc["Id"] != "arn:aws:sqs:us-east-1:000000000000:perm/SQSDefaultPolicy" ||
		st["Sid"] != "crossaccountpermission" || st["Effect"] != "Allow" || st["Action"] != "SQS:ReceiveMessage" ||
		st["Resource"] != "arn:aws:sqs:us-east-1:000000000000:perm" || len(principals) != 2 {
		t.Fatalf("AddPermission's policy %v", doc)
	}
	ok("RemovePermission", `{`+q+`,"Label":"crossaccountpermission"}`)
	if _, has := policyOf("perm"); has {
		t.Fatal("the policy outlives its last statement")
	}
	ok("AddPermission", `{`+q+`,"AWSAccountIds":["000000000000"],"Actions":["ReceiveMessage"],"Label":"crossaccountpermission"}`)
	if s, out := call("AddPermission", `{`+q+`,"AWSAccountIds":["668614515564"],"Actions":["ReceiveMessage"],"Label":"crossaccountpermission"}`); s != http.StatusBadRequest ||
		!strings.Contains(out, "InvalidParameterValue") || !strings.Contains(out, "Value crossaccountpermission for parameter Label is invalid. Reason: Already exists.") {
		t.Fatalf("a label in use: %d %s", s, out)
	}
	ok("AddPermission", `{`+q+`,"AWSAccountIds":["000000000000"],"Actions":["ReceiveMessage"],"Label":"crossaccountpermission2"}`)
	doc, _ = policyOf("perm")
	if stmts := doc["Statement"].([]any); len(stmts) != 2 ||
		stmts[0].(map[string]any)["Principal"].(map[string]any)["AWS"] != "arn:aws:iam::000000000000:root" {
		t.Fatalf("two labels: %v", doc)
	}
	ok("RemovePermission", `{`+q+`,"Label":"crossaccountpermission"}`)
	doc, _ = policyOf("perm")
	if stmts := doc["Statement"].([]any); len(stmts) != 1 || stmts[0].(map[string]any)["Sid"] != "crossaccountpermission2" {
		t.Fatalf("after removing the first label: %v", doc)
	}
	ok("RemovePermission", `{`+q+`,"Label":"crossaccountpermission2"}`)
	if s, out := call("RemovePermission", `{`+q+`,"Label":"crossaccountpermission2"}`); s != http.StatusBadRequest ||
		!strings.Contains(out, "InvalidParameterValue") || !strings.Contains(out, "Value crossaccountpermission2 for parameter Label is invalid. Reason: can't find label.") {
		t.Fatalf("an unknown label: %d %s", s, out)
	}
}
