package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/anysqs/anysqs/gateway/message"
)

// The floor server answers the calls this load generator makes (JSON protocol) with the
// least an SQS server on Go's net/http must do: read and decode the request, compute
// the MD5 the SDK checks, encode the answer. It stores nothing: every receive returns
// the messages asked for, made up. Its CPU per call, measured like any peer's, is what
// net/http and JSON cost on this machine before any queue work, the floor under the
// gateway's own figure.

// floorBody is the body of every message the floor server hands out.
const floorBody = "anysqs-load floor server message"

var floorBodyMD5 = message.MD5OfBody(floorBody)

// runFloor serves on addr until ctx ends.
func runFloor(ctx context.Context, addr string, stdout io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return serveFloorOn(ctx, ln, stdout)
}

// serveFloorOn serves on ln until ctx ends.
func serveFloorOn(ctx context.Context, ln net.Listener, stdout io.Writer) error {
	var seq atomic.Uint64
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serveFloor(w, r, &seq)
	})}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	fmt.Fprintf(stdout, "anysqs-load: floor server on %s\n", ln.Addr())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

type floorEntry struct {
	ID            string `json:"Id"`
	MessageBody   string `json:"MessageBody"`
	ReceiptHandle string `json:"ReceiptHandle"`
}

type floorRequest struct {
	QueueName           string       `json:"QueueName"`
	QueueURL            string       `json:"QueueUrl"`
	MessageBody         string       `json:"MessageBody"`
	MaxNumberOfMessages int          `json:"MaxNumberOfMessages"`
	Entries             []floorEntry `json:"Entries"`
}

type floorMessage struct {
	MessageID     string `json:"MessageId"`
	ReceiptHandle string `json:"ReceiptHandle,omitempty"`
	MD5OfBody     string `json:"MD5OfBody,omitempty"`
	Body          string `json:"Body,omitempty"`
	MD5OfMessage  string `json:"MD5OfMessageBody,omitempty"`
	ID            string `json:"Id,omitempty"`
}

func serveFloor(w http.ResponseWriter, r *http.Request, seq *atomic.Uint64) {
	var req floorRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	id := func() string { return "floor-" + strconv.FormatUint(seq.Add(1), 10) }
	var out any
	switch strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "AmazonSQS.") {
	case "CreateQueue":
		out = map[string]string{"QueueUrl": "http://" + r.Host + "/000000000000/" + req.QueueName}
	case "SendMessage":
		out = floorMessage{MessageID: id(), MD5OfMessage: message.MD5OfBody(req.MessageBody)}
	case "SendMessageBatch":
		ok := make([]floorMessage, len(req.Entries))
		for i, e := range req.Entries {
			ok[i] = floorMessage{ID: e.ID, MessageID: id(), MD5OfMessage: message.MD5OfBody(e.MessageBody)}
		}
		out = map[string]any{"Successful": ok, "Failed": []any{}}
	case "ReceiveMessage":
		msgs := make([]floorMessage, max(req.MaxNumberOfMessages, 1))
		for i := range msgs {
			n := id()
			msgs[i] = floorMessage{MessageID: n, ReceiptHandle: n, Body: floorBody, MD5OfBody: floorBodyMD5}
		}
		out = map[string]any{"Messages": msgs}
	case "DeleteMessageBatch":
		ok := make([]map[string]string, len(req.Entries))
		for i, e := range req.Entries {
			ok[i] = map[string]string{"Id": e.ID}
		}
		out = map[string]any{"Successful": ok, "Failed": []any{}}
	default: // DeleteMessage and the rest: an empty answer
		out = struct{}{}
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	_ = json.NewEncoder(w).Encode(out)
}
