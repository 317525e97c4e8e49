package plugin

import (
	"context"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/anysqs/anysqs/drivers"
	pb "github.com/anysqs/anysqs/drivers/plugin/internal/driverpb"
)

// Handshake is what a host and a plugin check before anything else. The magic cookie
// only tells a binary that it was started as an anysqs driver plugin, so that one run
// by hand says so instead of waiting; it is not a secret.
var Handshake = goplugin.HandshakeConfig{
	MagicCookieKey:   "ANYSQS_DRIVER_PLUGIN",
	MagicCookieValue: "7d1f0a2c9e4b4c55a3b8e6f1d2c0b9a4",
}

// ProtocolVersion is the version of the driver plugin protocol (driver.proto) this
// package speaks. A host offers every version it speaks and a plugin answers with the
// highest both speak; with none in common the host refuses the plugin, naming both.
const ProtocolVersion = 2

// pluginName is the one plugin a driver plugin serves.
const pluginName = "driver"

// maxMessageBytes bounds one gRPC message: a receive of 10 messages of 1 MiB with
// attributes is over gRPC's 4 MiB default.
const maxMessageBytes = 64 << 20

// versions maps each protocol version this package speaks to its plugin set.
func versions(open drivers.Opener) map[int]goplugin.PluginSet {
	return map[int]goplugin.PluginSet{ProtocolVersion: {pluginName: &grpcPlugin{open: open}}}
}

// Serve runs the plugin side of the protocol in a plugin's main, with open as the
// driver's opener: the host calls it with the config section of the backend's options
// once the process has started. Serve returns when the host ends the plugin; the
// driver is closed by then.
//
//	func main() { plugin.Serve(mydriver.Open) }
func Serve(open drivers.Opener) {
	serve(open, versions(open))
}

func serve(open drivers.Opener, vs map[int]goplugin.PluginSet) {
	var srv *server
	for _, set := range vs {
		if p, ok := set[pluginName].(*grpcPlugin); ok {
			p.srv = &server{open: open}
			srv = p.srv
		}
	}
	if srv != nil {
		go exitWithHost(srv)
	}
	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig:  Handshake,
		VersionedPlugins: vs,
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			return grpc.NewServer(append(opts, grpc.MaxRecvMsgSize(maxMessageBytes), grpc.MaxSendMsgSize(maxMessageBytes))...)
		},
		// The host forwards the plugin's stderr to its own; only what matters.
		Logger: hclog.New(&hclog.LoggerOptions{Name: "anysqs-plugin", Level: hclog.Warn, Output: os.Stderr, JSONFormat: true}),
	})
	if srv != nil {
		srv.closeDriver()
	}
}

// exitWithHost ends the plugin when the host process is gone: a host killed with
// SIGKILL cannot end it, and an orphan would hold the driver's storage (SQLite's lock on
// its data directory) against the plugin of the gateway started next. The plugin sees
// the host's end as its reparenting.
func exitWithHost(srv *server) {
	host := os.Getppid()
	for range time.Tick(time.Second) {
		if os.Getppid() != host {
			srv.closeDriver()
			os.Exit(1)
		}
	}
}

// grpcPlugin is the go-plugin face of the protocol: the server side on the plugin, the
// client side on the host.
type grpcPlugin struct {
	goplugin.NetRPCUnsupportedPlugin
	open drivers.Opener
	srv  *server
}

func (p *grpcPlugin) GRPCServer(_ *goplugin.GRPCBroker, s *grpc.Server) error {
	srv := p.srv
	if srv == nil {
		srv = &server{open: p.open}
	}
	pb.RegisterDriverServer(s, srv)
	return nil
}

// grpcClient is what the host dispenses: the generated client and its connection (for
// the health checks that tell a hung plugin).
type grpcClient struct {
	rpc pb.DriverClient
	cc  *grpc.ClientConn
}

func (p *grpcPlugin) GRPCClient(_ context.Context, _ *goplugin.GRPCBroker, cc *grpc.ClientConn) (any, error) {
	return &grpcClient{rpc: pb.NewDriverClient(cc), cc: cc}, nil
}
