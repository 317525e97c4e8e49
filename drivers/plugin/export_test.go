package plugin

import (
	goplugin "github.com/hashicorp/go-plugin"

	"github.com/anysqs/anysqs/drivers"
)

// ServeVersion serves open under protocol version v only: a plugin of another version.
func ServeVersion(open drivers.Opener, v int) {
	serve(open, map[int]goplugin.PluginSet{v: {pluginName: &grpcPlugin{open: open}}})
}
