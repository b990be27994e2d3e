package crashtest

import "math/rand"

// Power is how the tool cuts the power under the server: a file system
// that keeps only what a disk would have kept (what was fsynced, and, when
// torn, a random part of the rest). The crashfs package provides it; the
// interface keeps the scenarios independent of how it is done.
type Power interface {
	// Available says why power cuts cannot run here (no FUSE), or nil.
	Available() error
	// Mount serves the folder backing at mountpoint.
	Mount(backing, mountpoint string) (Mounted, error)
}

// Mounted is one mounted file system.
type Mounted interface {
	// PowerCut reverts the backing folder to what a disk would have kept
	// and remounts it; the server must be dead. It returns a short account
	// of what was lost, for the report.
	PowerCut(torn bool, rng *rand.Rand) (string, error)
	Unmount() error
}

// noPower is the Power of a build without crashfs.
type noPower struct{ why string }

func (p noPower) Available() error { return errString(p.why) }
func (p noPower) Mount(string, string) (Mounted, error) {
	return nil, errString(p.why)
}

type errString string

func (e errString) Error() string { return string(e) }

// DefaultPower is what Run uses when Config.Power is nil.
var DefaultPower Power = noPower{"power loss needs the crashfs package, not in this build"}
