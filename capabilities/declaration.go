// Package capabilities is the catalog of SQS behaviours a backend can differ on, the
// declarations drivers make against it, and the reject/degrade policy built on both.
//
// It imports only the standard library: drivers, the gateway, the conformance suite and
// the report generator all depend on it, and it depends on nothing of theirs.
package capabilities

// ID names one capability of the catalog, e.g. "fifo.ordering". IDs are stable: the
// compatibility report and user policy configuration refer to them.
type ID string

// Level says how a backend delivers a capability.
type Level string

const (
	// Native: the backend does what SQS does.
	Native Level = "native"
	// Emulated: the driver reproduces the SQS behaviour exactly on top of the backend.
	Emulated Level = "emulated"
	// Degraded: a documented fallback happens instead of the SQS behaviour.
	Degraded Level = "degraded"
	// Unsupported: the gateway rejects requests that need the capability.
	Unsupported Level = "unsupported"
)

// Declaration is one driver's statement about one capability. It is plain data so that
// it crosses a plugin boundary unchanged.
type Declaration struct {
	ID     ID
	Level  Level
	Limits map[string]string // e.g. {"max_seconds": "43200"}; keys are documented per capability
	Note   string            // one line for the report: what differs and why
}

// Declare returns the declaration of capability id at level l, with its note and its
// limits as key, value pairs ("max_seconds", "43200"); Limits is nil without any. Every
// driver's Describe builds its declarations with it:
//
//	native, degraded := capabilities.Native.Declare, capabilities.Degraded.Declare
//	native(capabilities.DelayQueue, "", "max_seconds", "900")
//
// An odd number of limit strings is a programming error, and Declare panics.
func (l Level) Declare(id ID, note string, limits ...string) Declaration {
	d := Declaration{ID: id, Level: l, Note: note}
	if len(limits)%2 != 0 {
		panic("capabilities: limits of " + string(id) + " are not key, value pairs")
	}
	if len(limits) > 0 {
		d.Limits = make(map[string]string, len(limits)/2)
		for i := 0; i < len(limits); i += 2 {
			d.Limits[limits[i]] = limits[i+1]
		}
	}
	return d
}
