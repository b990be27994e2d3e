package crashtest

import (
	"fmt"
	"math/rand/v2"
	"os"

	"github.com/redshard/redshard/crashfs"
)

// Power is how the tool cuts the power under the server: a file system
// that keeps only what a disk would have kept (what was fsynced, and, when
// torn, a random part of the rest). crashfs provides it; the interface
// keeps the scenarios independent of how it is done, and lets a build or a
// test put another in.
type Power interface {
	// Available says why power cuts cannot run here (no FUSE), or nil.
	Available() error
	// Mount serves the folder backing at mountpoint (made if missing).
	Mount(backing, mountpoint string) (Mounted, error)
}

// Mounted is one mounted file system.
type Mounted interface {
	// PowerCut reverts the backing folder to what a disk would have kept
	// and remounts it; the server must be dead. It returns a short account
	// of what was lost, for the report.
	PowerCut(torn bool, seed uint64) (string, error)
	Unmount() error
}

// DefaultPower is what Run uses when Config.Power is nil: crashfs.
var DefaultPower Power = fusePower{}

type fusePower struct{}

func (fusePower) Available() error { return crashfs.Available() }

func (fusePower) Mount(backing, mountpoint string) (Mounted, error) {
	if err := os.MkdirAll(mountpoint, 0o755); err != nil {
		return nil, err
	}
	fs, err := crashfs.Mount(backing, mountpoint, crashfs.Options{})
	if err != nil {
		return nil, err
	}
	return fuseMount{fs}, nil
}

type fuseMount struct{ fs *crashfs.FS }

func (m fuseMount) Unmount() error { return m.fs.Unmount() }

func (m fuseMount) PowerCut(torn bool, seed uint64) (string, error) {
	rep, err := m.fs.PowerCut(crashfs.Cut{Torn: torn, Rand: rand.New(rand.NewPCG(seed, seed>>1|1))})
	if err != nil {
		return "", err
	}
	st := m.fs.Stats()
	s := fmt.Sprintf("power cut: %d files reverted, %d bytes lost, %d names undone (%d fsyncs, %d dir fsyncs seen)",
		rep.Files, rep.BytesLost, rep.NamesUndone, st.Fsyncs, st.DirFsyncs)
	if len(rep.Torn) > 0 {
		s += fmt.Sprintf(", torn %v", rep.Torn)
	}
	return s, nil
}
