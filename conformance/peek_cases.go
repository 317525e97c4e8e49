package conformance

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"

	"github.com/anysqs/anysqs/capabilities"
)

// peeked is one message of an AnysqsPeekMessages answer, in either protocol.
type peeked struct {
	MessageId        string            `json:"MessageId"`
	Body             string            `json:"Body"`
	MD5OfBody        string            `json:"MD5OfBody"`
	State            string            `json:"State"`
	VisibleTimestamp string            `json:"VisibleTimestamp"`
	Attributes       map[string]string `json:"Attributes"`
}

type peekPage struct {
	Messages  []peeked `json:"Messages"`
	NextToken string   `json:"NextToken"`
}

// peekCases: anysqs's AnysqsPeekMessages lists messages and changes none of them.
func peekCases() []tc {
	browse := []capabilities.ID{capabilities.QueueBrowse}
	return []tc{
		{Caps: browse, Name: "peek-lists-every-state-and-changes-nothing", Run: func(h *H) {
			if h.st.endpoint != "" {
				h.T.Skip("not an SQS action: AnysqsPeekMessages is anysqs's own")
			}
			url := h.Queue()
			h.Send(url, "held")
			held := h.ReceiveOne(url, 600)
			for i := range 3 {
				h.Send(url, fmt.Sprint("waiting-", i))
			}
			_, err := h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("later"), DelaySeconds: 600})
			h.Must(err, "SendMessage delayed")
			counts := func() [3]int { v, nv, d := h.Counts(url); return [3]int{v, nv, d} }
			before := counts()

			// Pages of two: five messages, each once, with the state it is in.
			var all []peeked
			token := ""
			for page := 0; ; page++ {
				p := h.peek(url, 2, token)
				if len(p.Messages) > 2 || page > 5 {
					h.T.Fatalf("page %d: %d messages for a limit of 2 (or no end)", page, len(p.Messages))
				}
				all = append(all, p.Messages...)
				if token = p.NextToken; token == "" {
					break
				}
			}
			states := map[string]string{}
			for _, m := range all {
				if _, dup := states[m.Body]; dup {
					h.T.Fatalf("peek listed %q twice across pages", m.Body)
				}
				states[m.Body] = m.State
				if m.MD5OfBody != md5Hex(m.Body) {
					h.T.Fatalf("peek of %q: MD5OfBody %s", m.Body, m.MD5OfBody)
				}
			}
			want := map[string]string{"held": "in-flight", "waiting-0": "visible", "waiting-1": "visible",
				"waiting-2": "visible", "later": "delayed"}
			if fmt.Sprint(states) != fmt.Sprint(want) {
				h.T.Fatalf("peek states %v, want %v", states, want)
			}
			for _, m := range all {
				if m.MessageId == aws.ToString(held.MessageId) && m.Attributes["ApproximateReceiveCount"] != "1" {
					h.T.Fatalf("the held message peeked with receive count %q, want 1", m.Attributes["ApproximateReceiveCount"])
				}
			}

			// Nothing changed: counts, receive counts, first-receive times, the held message.
			if after := counts(); after != before {
				h.T.Fatalf("counts (visible, in flight, delayed) %v before the peek, %v after", before, after)
			}
			got := h.Receive(url, 10, 600)
			bodies := Bodies(got)
			slices.Sort(bodies)
			if fmt.Sprint(bodies) != "[waiting-0 waiting-1 waiting-2]" {
				h.T.Fatalf("after the peek a receive returned %v, want the three waiting messages", bodies)
			}
			for _, m := range got {
				if n := h.ReceiveCount(m); n != 1 {
					h.T.Fatalf("message %s received with count %d after a peek, want 1", aws.ToString(m.Body), n)
				}
			}
			h.Delete(url, held) // the held message's handle still holds
		}},
	}
}

// peek calls AnysqsPeekMessages in the case's protocol and fails the case on an error.
func (h *H) peek(queueURL string, limit int, token string) peekPage {
	h.T.Helper()
	p, err := h.peekRaw(queueURL, limit, token)
	if err != nil {
		h.T.Fatalf("AnysqsPeekMessages: %v", err)
	}
	return p
}

// peekRaw calls AnysqsPeekMessages in the case's protocol, signed as the SDK signs; an
// SQS error comes back as a smithy.APIError, as the SDK would return it.
func (h *H) peekRaw(queueURL string, limit int, token string) (peekPage, error) {
	h.T.Helper()
	var body []byte
	var req *http.Request
	var err error
	if h.protocol == protocolQuery {
		v := url.Values{"Action": {"AnysqsPeekMessages"}, "Version": {"2012-11-05"}, "QueueUrl": {queueURL},
			"MaxNumberOfMessages": {strconv.Itoa(limit)}}
		if token != "" {
			v.Set("NextToken", token)
		}
		body = []byte(v.Encode())
		req, err = http.NewRequestWithContext(h.Ctx, http.MethodPost, h.URL+"/", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		in := map[string]any{"QueueUrl": queueURL, "MaxNumberOfMessages": limit}
		if token != "" {
			in["NextToken"] = token
		}
		body, _ = json.Marshal(in)
		req, err = http.NewRequestWithContext(h.Ctx, http.MethodPost, h.URL+"/", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/x-amz-json-1.0")
		req.Header.Set("X-Amz-Target", "AmazonSQS.AnysqsPeekMessages")
	}
	if err != nil {
		h.T.Fatal(err)
	}
	sum := sha256.Sum256(body)
	creds, err := h.SQS.Options().Credentials.Retrieve(context.Background())
	if err != nil {
		h.T.Fatal(err)
	}
	if err := v4.NewSigner().SignHTTP(h.Ctx, creds, req, hex.EncodeToString(sum[:]), "sqs", h.SQS.Options().Region, time.Now()); err != nil {
		h.T.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.T.Fatalf("AnysqsPeekMessages: %v", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return peekPage{}, apiError(h.protocol, raw)
	}
	var page peekPage
	if h.protocol == protocolQuery {
		var x struct {
			Result struct {
				Messages []struct {
					peeked
					Attrs []struct{ Name, Value string } `xml:"Attribute"`
				} `xml:"Message"`
				NextToken string `xml:"NextToken"`
			} `xml:"AnysqsPeekMessagesResult"`
		}
		if err := xml.Unmarshal(raw, &x); err != nil {
			return peekPage{}, fmt.Errorf("%v in %s", err, raw)
		}
		page.NextToken = x.Result.NextToken
		for _, m := range x.Result.Messages {
			p := m.peeked
			p.Attributes = map[string]string{}
			for _, a := range m.Attrs {
				p.Attributes[a.Name] = a.Value
			}
			page.Messages = append(page.Messages, p)
		}
		return page, nil
	}
	if err := json.Unmarshal(raw, &page); err != nil {
		return peekPage{}, fmt.Errorf("%v in %s", err, raw)
	}
	return page, nil
}

// apiError reads an SQS error body of either protocol.
func apiError(p wireProtocol, raw []byte) error {
	e := &smithy.GenericAPIError{}
	if p == protocolQuery {
		var x struct {
			Error struct{ Code, Message string } `xml:"Error"`
		}
		if err := xml.Unmarshal(raw, &x); err != nil {
			return fmt.Errorf("%v in %s", err, raw)
		}
		e.Code, e.Message = x.Error.Code, x.Error.Message
		return e
	}
	var j struct {
		Type    string `json:"__type"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(raw, &j); err != nil {
		return fmt.Errorf("%v in %s", err, raw)
	}
	e.Code, e.Message = j.Type[strings.LastIndex(j.Type, "#")+1:], j.Message
	return e
}

func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// unsupportedPeek is queue.browse's rejection probe: the peek fails with the catalog's
// code and nothing changes.
func unsupportedPeek(h *H) {
	url := h.Queue()
	h.Send(url, "kept")
	_, err := h.peekRaw(url, 10, "")
	h.wantRejected(err, capabilities.QueueBrowse, "AnysqsPeekMessages")
	if m := h.ReceiveOne(url, 0); h.ReceiveCount(m) != 1 {
		h.T.Fatalf("after a rejected peek the message was received with count %d", h.ReceiveCount(m))
	}
}
