package server

// Logging in Redis's serverLog format:
//
//	<pid>:<role> <dd Mon yyyy HH:MM:SS.mmm> <level-char> <message>
//
// e.g. "4024:M 29 Nov 2026 09:24:35.907 * Ready to accept connections".
// Level chars: '.' debug, '-' verbose, '*' notice, '#' warning. Role chars:
// 'M' master, 'S' replica, 'C' child, 'X' sentinel.

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// LogLevel is a Redis loglevel; the values match the order of the loglevel
// option (debug, verbose, notice, warning).
type LogLevel int32

const (
	LogLevelDebug LogLevel = iota
	LogLevelVerbose
	LogLevelNotice
	LogLevelWarning
)

func (l LogLevel) String() string {
	if l >= LogLevelDebug && l <= LogLevelWarning {
		return cfgEnumLoglevel[l]
	}
	return "unknown"
}

// logMaxLen is Redis's LOG_MAX_LEN: messages are cut to logMaxLen-1 bytes.
const logMaxLen = 1024

const logLevelChars = ".-*#"

// Logger writes Redis-format log lines to the configured logfile, or to
// standard output when logfile is "". The level threshold is the Config's
// loglevel, read atomically at every call, so CONFIG SET loglevel applies
// at once. Like Redis, the logfile is opened in append mode for every line,
// so an external log rotation (rename + new file) needs no signal.
// A nil *Logger discards everything.
type Logger struct {
	mu   sync.Mutex
	cfg  *Config // nil: notice level
	path string  // "" = out
	out  io.Writer
	pid  int
	role atomic.Uint32
}

// NewLogger returns a logger for cfg (cfg may be nil: notice level to
// stdout). With a logfile it checks that the file can be opened for
// appending; the error reads "Can't open the log file: <reason>", as in
// Redis. A relative logfile is relative to the current directory, which is
// dir once the server has entered it.
func NewLogger(cfg *Config) (*Logger, error) {
	l := &Logger{cfg: cfg, out: os.Stdout, pid: os.Getpid()}
	l.role.Store('M')
	if cfg != nil {
		l.path = cfg.LogFile()
	}
	if l.path != "" {
		f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
		if err != nil {
			return nil, fmt.Errorf("Can't open the log file: %s", cfgStrerror(err))
		}
		f.Close()
	}
	return l, nil
}

// NewLoggerTo returns a logger writing to w (tests, tools) with the level
// threshold of cfg (nil: notice).
func NewLoggerTo(w io.Writer, cfg *Config) *Logger {
	l := &Logger{cfg: cfg, out: w, pid: os.Getpid()}
	l.role.Store('M')
	return l
}

// SetRole sets the role character: 'M' master (default), 'S' replica,
// 'C' child process, 'X' sentinel.
func (l *Logger) SetRole(role byte) {
	if l != nil {
		l.role.Store(uint32(role))
	}
}

// Enabled reports whether a message of this level would be written.
func (l *Logger) Enabled(level LogLevel) bool {
	if l == nil {
		return false
	}
	min := LogLevelNotice
	if l.cfg != nil {
		min = l.cfg.LogLevel()
	}
	return level >= min
}

func (l *Logger) Debugf(format string, args ...any)   { l.Logf(LogLevelDebug, format, args...) }
func (l *Logger) Verbosef(format string, args ...any) { l.Logf(LogLevelVerbose, format, args...) }
func (l *Logger) Noticef(format string, args ...any)  { l.Logf(LogLevelNotice, format, args...) }
func (l *Logger) Warningf(format string, args ...any) { l.Logf(LogLevelWarning, format, args...) }

// Logf logs a printf-style message at level.
func (l *Logger) Logf(level LogLevel, format string, args ...any) {
	if !l.Enabled(level) {
		return
	}
	msg := fmt.Sprintf(format, args...)
	if len(msg) > logMaxLen-1 {
		msg = msg[:logMaxLen-1]
	}
	now := time.Now()
	buf := make([]byte, 0, 48+len(msg))
	buf = fmt.Appendf(buf, "%d:%c ", l.pid, rune(l.role.Load()))
	buf = now.AppendFormat(buf, "02 Jan 2006 15:04:05.000")
	buf = append(buf, ' ', logLevelChars[level], ' ')
	buf = append(buf, msg...)
	buf = append(buf, '\n')
	l.write(buf)
}

// Raw writes msg as is, without prefix nor newline (Redis LL_RAW, used for
// the ASCII logo), if level is enabled.
func (l *Logger) Raw(level LogLevel, msg string) {
	if l.Enabled(level) {
		l.write([]byte(msg))
	}
}

func (l *Logger) write(b []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.path == "" {
		l.out.Write(b)
		return
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
	if err != nil {
		return
	}
	f.Write(b)
	f.Close()
}
