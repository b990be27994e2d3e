package server

import (
	"errors"
	"os"
	"strconv"
	"sync"
)

// oomScoreAdjPath is the kernel's OOM-killer adjustment of this process.
const oomScoreAdjPath = "/proc/self/oom_score_adj"

// oomState remembers the score the process had before redshard changed it,
// to restore it when oom-score-adj is turned off (Redis's statics
// oom_score_adjusted_by_redis and oom_score_adj_base).
type oomState struct {
	mu       sync.Mutex
	adjusted bool
	base     int64
}

var errOOMScoreAdj = errors.New("Failed to set current oom_score_adj. Check server logs.")

// initOOMScoreAdj applies oom-score-adj at start and on every CONFIG SET of
// it or of oom-score-adj-values (Redis's updateOOMScoreAdj apply function).
func (srv *Server) initOOMScoreAdj() {
	warn := func() error {
		if v := srv.cfg.OOMScoreAdjValues(); v[1] < v[0] || v[2] < v[1] {
			srv.log.Warningf("The oom-score-adj-values configuration may not work for non-privileged processes! " +
				"Please consult the documentation.")
		}
		return nil
	}
	warn() // Redis warns as it reads the value from the config
	srv.cfg.OnApply("oom-score-adj-values", warn)
	for _, name := range []string{"oom-score-adj", "oom-score-adj-values"} {
		srv.cfg.OnApply(name, func() error {
			if !srv.setOOMScoreAdj() {
				return errOOMScoreAdj
			}
			return nil
		})
	}
	srv.setOOMScoreAdj()
}

// setOOMScoreAdj is Redis's setOOMScoreAdj for the process's class, the
// master's or, while it replicates, the replica's (the third class is the
// background child's, childOOMScoreAdj): "yes"/"relative" adds that
// class's value of oom-score-adj-values to the score the process started with,
// "absolute" sets it, both clamped to [-1000, 1000]; "no" restores the
// original score if redshard had changed it. It reports failures in the
// log, as Redis does.
func (srv *Server) setOOMScoreAdj() bool {
	st := &srv.oom
	st.mu.Lock()
	defer st.mu.Unlock()
	mode, _ := srv.cfg.GetValue("oom-score-adj")
	var val int64
	switch {
	case mode != "no":
		if !st.adjusted {
			st.adjusted = true
			b, err := os.ReadFile(oomScoreAdjPath)
			if err != nil {
				srv.log.Warningf("Unable to read oom_score_adj: %s", cfgStrerror(err))
				return false
			}
			st.base = cAtoi(b)
		}
		class := 0
		if srv.repl.isReplica.Load() {
			class = 1
		}
		val = srv.cfg.OOMScoreAdjValues()[class]
		if mode == "yes" {
			val += st.base
		}
		val = min(max(val, -1000), 1000)
	case st.adjusted:
		st.adjusted = false
		val = st.base
	default:
		return true
	}
	f, err := os.OpenFile(oomScoreAdjPath, os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString(strconv.FormatInt(val, 10) + "\n")
		f.Close()
	}
	if err != nil {
		srv.log.Warningf("Unable to write oom_score_adj: %s", cfgStrerror(err))
		return false
	}
	return true
}

// childOOMScoreAdj is the score a background job's child process gives
// itself (bgchild), as Redis's child calls setOOMScoreAdj(CONFIG_OOM_BGCHILD):
// "" when oom-score-adj is no, so the child keeps the server's score.
func (srv *Server) childOOMScoreAdj() string {
	st := &srv.oom
	st.mu.Lock()
	defer st.mu.Unlock()
	mode, _ := srv.cfg.GetValue("oom-score-adj")
	if mode == "no" || !st.adjusted {
		return ""
	}
	val := srv.cfg.OOMScoreAdjValues()[2]
	if mode == "yes" {
		val += st.base
	}
	return strconv.FormatInt(min(max(val, -1000), 1000), 10)
}

// OOMScoreAdjValues is oom-score-adj-values: the master, replica and
// background-child scores.
func (c *Config) OOMScoreAdjValues() [3]int64 {
	if v := c.oomAdj.Load(); v != nil {
		return *v
	}
	return [3]int64{0, 200, 800}
}
