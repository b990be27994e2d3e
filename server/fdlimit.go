package server

import (
	"fmt"
	"strconv"
	"syscall"
)

// reservedFDs is Redis's CONFIG_MIN_RESERVED_FDS: descriptors kept for the
// listeners, the log and the append-only files beyond one per client.
const reservedFDs = 32

// raiseOpenFilesLimit is the part of Redis's adjustOpenFilesLimit that
// touches the process: it tries to raise RLIMIT_NOFILE to maxclients plus
// the reserved descriptors, stepping down by 16 as Redis does, and returns
// the limit it has and the limit it had (or ok false when the limit cannot
// be read).
func raiseOpenFilesLimit(maxclients int64) (best, old uint64, setErr error, ok bool) {
	want := uint64(maxclients) + reservedFDs
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, 0, err, false
	}
	old = lim.Cur
	if old >= want {
		return old, old, nil, true
	}
	for best = want; best > old; {
		l := syscall.Rlimit{Cur: best, Max: max(lim.Max, best)}
		err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
		if err == nil {
			break
		}
		setErr = err
		if best < 16 {
			best = old
			break
		}
		best -= 16
	}
	return max(best, old), old, setErr, true
}

// initMaxclients does at startup what Redis's adjustOpenFilesLimit does: get
// enough descriptors for maxclients, or lower maxclients to what the limit
// allows (and refuse to start if that leaves none). It also makes CONFIG SET
// maxclients fail, as Redis's updateMaxclients does, when the system cannot
// give the descriptors.
func (srv *Server) initMaxclients() error {
	cfg := srv.cfg
	mc := cfg.MaxClients()
	best, old, setErr, ok := raiseOpenFilesLimit(mc)
	switch {
	case !ok:
		srv.log.Warningf("Unable to obtain the current NOFILE limit (%s), assuming 1024 and setting the max clients configuration accordingly.", strerror(setErr))
		_ = cfg.Set([][2]string{{"maxclients", strconv.Itoa(1024 - reservedFDs)}})
	case best < uint64(mc)+reservedFDs:
		if best <= reservedFDs {
			return fmt.Errorf("Your current 'ulimit -n' of %d is not enough for the server to start. Please increase your open file limit to at least %d. Exiting.", old, uint64(mc)+reservedFDs)
		}
		reduced := int64(best) - reservedFDs
		srv.log.Warningf("You requested maxclients of %d requiring at least %d max file descriptors.", mc, uint64(mc)+reservedFDs)
		srv.log.Warningf("Server can't set maximum open files to %d because of OS error: %s.", uint64(mc)+reservedFDs, strerror(setErr))
		srv.log.Warningf("Current maximum open files is %d. maxclients has been reduced to %d to compensate for low ulimit. If you need higher maxclients increase 'ulimit -n'.", best, reduced)
		_ = cfg.Set([][2]string{{"maxclients", strconv.FormatInt(reduced, 10)}})
	case best > old:
		srv.log.Noticef("Increased maximum number of open files to %d (it was originally set to %d).", best, old)
	}
	cfg.OnApply("maxclients", func() error {
		mc := cfg.MaxClients()
		best, _, _, ok := raiseOpenFilesLimit(mc)
		if !ok {
			best = 1024
		}
		if best < uint64(mc)+reservedFDs {
			return fmt.Errorf("The operating system is not able to handle the specified number of clients, try with %d", int64(best)-reservedFDs)
		}
		return nil
	})
	return nil
}

// strerror spells an OS error as C's strerror does ("Operation not
// permitted"), for Redis's log lines.
func strerror(err error) string {
	if err == nil {
		return "Success"
	}
	s := err.Error()
	if s != "" && s[0] >= 'a' && s[0] <= 'z' {
		s = string(s[0]-'a'+'A') + s[1:]
	}
	return s
}
