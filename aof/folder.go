package aof

import (
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"time"
)

// Folder is the AOF folder while appendonly is no. Redis 7.0 still
// rewrites it then (BGREWRITEAOF writes a new base and drops the
// incremental files, since nothing is appended to them while the AOF is
// off) and DEBUG LOADAOF still loads whatever it holds. A Folder has no
// writer and keeps nothing open between calls: each call reads the
// manifest from disk, as Redis's aofLoadManifestFromDisk does.
type Folder struct {
	o Options
}

// OpenFolder returns the folder Options name. It touches no file.
func OpenFolder(o Options) *Folder { return &Folder{o: o} }

// idle returns a Log over the folder with its manifest read (an empty
// manifest when there is none) and no writer.
func (f *Folder) idle() (*Log, bool, error) {
	l, err := newLog(f.o)
	if err != nil {
		return nil, false, err
	}
	m, err := readManifest(l.fs, l.manifestPath)
	exists := true
	switch {
	case errors.Is(err, fs.ErrNotExist):
		m, exists = &Manifest{}, false
	case err != nil:
		return nil, false, err
	}
	l.manifest = m
	l.loaded = true
	return l, exists, nil
}

// Load replays the files the folder's manifest lists, as Log.Load does,
// without cutting a torn tail (DEBUG LOADAOF while appendonly is no). It
// returns ErrNoAOF when the folder has no manifest.
func (f *Folder) Load(apply func(argv [][]byte) error) (LoadStats, error) {
	l, exists, err := f.idle()
	if err != nil {
		return LoadStats{}, err
	}
	if !exists {
		return LoadStats{}, ErrNoAOF
	}
	return l.replay(l.manifest.files(), apply, false)
}

// ErrNoAOF is returned by Folder.Load when there is no AOF to load.
var ErrNoAOF = errors.New("aof: the AOF folder has no manifest: there is no append only file to load")

// StartRewrite starts a rewrite of the folder while the AOF is off. The
// image the server writes into the Rewrite becomes the next base file;
// Finish replaces the manifest with that base alone and deletes the files
// the old manifest listed. There is no cut and no new incremental file:
// nothing is logged while the AOF is off. The folder is created if
// missing, as Redis's rewrite child does.
func (f *Folder) StartRewrite() (*Rewrite, error) {
	l, _, err := f.idle()
	if err != nil {
		return nil, err
	}
	if err := MkdirDurable(l.fs, l.dir, 0o755); err != nil {
		return nil, fmt.Errorf("aof: can't open or create append-only dir %s: %w", l.dir, err)
	}
	tmp, tmpPath, err := openTemp(l.fs, l.dir, rewriteTempPattern, "redshard-aof-rewrite", true)
	if err != nil {
		return nil, fmt.Errorf("aof: opening the temp file for AOF rewrite: %w", err)
	}
	r := &Rewrite{
		l: l, tmpPath: tmpPath, tmp: tmp, started: time.Now(),
		// Every incremental file is older than this "new" one: Finish
		// drops them all.
		incr:     ManifestEntry{Seq: l.manifest.IncrSeq + 1, Type: typeIncr},
		bgDone:   make(chan struct{}),
		finished: make(chan struct{}),
	}
	r.cond = sync.NewCond(&r.mu)
	r.child, _ = tmp.(ChildFile)
	r.main = r.NewWriter()
	l.rw = r
	l.o.Logf(LogNotice, "Background append only file rewriting started")
	go r.bg()
	return r, nil
}

// HasManifest reports whether the folder has a manifest (an AOF to load).
func (f *Folder) HasManifest() bool {
	l, err := newLog(f.o)
	if err != nil {
		return false
	}
	_, err = l.fs.Stat(l.manifestPath)
	return err == nil
}
