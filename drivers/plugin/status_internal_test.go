package plugin

import (
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/status"
)

func statusOf(err error) (*spb.Status, bool) {
	st, ok := status.FromError(err)
	if !ok {
		return nil, false
	}
	return st.Proto(), true
}

func statusFromProto(s *spb.Status) error { return status.FromProto(s).Err() }
