package main

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
)

// TestFloorServerAnswersTheSDK runs a closed loop through aws-sdk-go-v2 against the floor
// server at batch 1 and 10: the SDK accepts every answer (it checks the MD5s).
func TestFloorServerAnswersTheSDK(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	var banner bytes.Buffer
	go func() { served <- serveFloorOn(ctx, ln, &banner) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("floor server: %v", err)
		}
	}()
	for _, batch := range []string{"1", "10"} {
		var out, errs bytes.Buffer
		err := run(context.Background(), []string{"--mode", "closed", "--paths", "gateway", "--endpoint", "http://" + addr,
			"--workers", "2", "--batch", batch, "--warmup", "0s", "--duration", "300ms"}, &out, &errs)
		if err != nil {
			t.Fatalf("batch %s: %v\n%s", batch, err, errs.String())
		}
		row := ""
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.Contains(l, "| gateway |") {
				row = l
			}
		}
		if cols := strings.Split(row, "|"); len(cols) < 11 || strings.TrimSpace(cols[10]) != "0" {
			t.Fatalf("batch %s: want a gateway row with no errors:\n%s\n%s", batch, out.String(), errs.String())
		}
	}
}
