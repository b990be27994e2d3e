package shard

import (
	"bufio"
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/redshard/redshard/resp"
)

// MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE]
// [AUTH password | AUTH2 username password] [KEYS key ...]
//
// As Redis's migrateCommand: the keys' DUMP payloads go to the target as
// RESTORE commands (after AUTH and a SELECT when the cached connection is
// on another database), and each key the target acknowledged is deleted
// here (not with COPY) and logged as one DEL.
//
// Limitation: a command runs to completion on the loop that owns its
// shard (a MIGRATE of keys on several shards as a cross-shard transaction
// holding those shards), and the command model has no way to suspend it
// while I/O is in flight. So the connect, the writes and the reads are
// blocking, each bounded by the timeout, as in Redis (whose whole server
// waits): while a MIGRATE waits on the target, the loop it runs on (and
// the loops of the shards it holds) serve no other client. The source keys
// are read before and deleted after the exchange within the one command,
// so no other command sees them in between.

// migrateSocket is a cached connection to a target (Redis's
// migrateCachedSocket).
type migrateSocket struct {
	conn    net.Conn
	r       *bufio.Reader
	lastDB  int64 // database the connection has SELECTed, -1 if unknown
	lastUse time.Time
}

const (
	migrateCacheItems = 64               // MIGRATE_SOCKET_CACHE_ITEMS
	migrateCacheTTL   = 10 * time.Second // MIGRATE_SOCKET_CACHE_TTL
)

// The connection cache, shared by every loop. A connection in use is out
// of the map (MIGRATEs on two loops to one target use two connections).
var migrateCache struct {
	mu      sync.Mutex
	socks   map[string]*migrateSocket
	janitor sync.Once
}

// MigrateCachedSockets is INFO's migrate_cached_sockets.
func MigrateCachedSockets() int {
	migrateCache.mu.Lock()
	defer migrateCache.mu.Unlock()
	return len(migrateCache.socks)
}

// migrateCloseIdle closes connections unused for more than 10 seconds
// (Redis's migrateCloseTimedoutSockets, from serverCron).
func migrateCloseIdle(now time.Time) {
	migrateCache.mu.Lock()
	defer migrateCache.mu.Unlock()
	for name, cs := range migrateCache.socks {
		if now.Sub(cs.lastUse) > migrateCacheTTL {
			cs.conn.Close()
			delete(migrateCache.socks, name)
		}
	}
}

// migrateTake returns the cached connection to name, taken out of the
// cache, or nil.
func migrateTake(name string) *migrateSocket {
	migrateCache.mu.Lock()
	defer migrateCache.mu.Unlock()
	cs := migrateCache.socks[name]
	if cs != nil {
		delete(migrateCache.socks, name)
	}
	return cs
}

// migratePut puts a connection (back) in the cache, dropping a random one
// when the cache is full, or closing it when another has been cached
// meanwhile.
func migratePut(name string, cs *migrateSocket) {
	migrateCache.janitor.Do(func() {
		go func() {
			for now := range time.Tick(time.Second) {
				migrateCloseIdle(now)
			}
		}()
	})
	migrateCache.mu.Lock()
	defer migrateCache.mu.Unlock()
	if migrateCache.socks == nil {
		migrateCache.socks = make(map[string]*migrateSocket)
	}
	if _, ok := migrateCache.socks[name]; ok {
		cs.conn.Close()
		return
	}
	if len(migrateCache.socks) >= migrateCacheItems {
		k := rand.IntN(len(migrateCache.socks))
		for n, old := range migrateCache.socks {
			if k == 0 {
				old.conn.Close()
				delete(migrateCache.socks, n)
				break
			}
			k--
		}
	}
	migrateCache.socks[name] = cs
}

// migrateDial connects to a target (connBlockingConnect).
func migrateDial(host, port string, timeout time.Duration) (*migrateSocket, error) {
	p, _ := strconv.Atoi(port) // atoi, as Redis: a bad port fails the connect
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(host, strconv.Itoa(p)), timeout)
	if err != nil {
		return nil, err
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	return &migrateSocket{conn: conn, r: bufio.NewReaderSize(conn, 4096), lastDB: -1}, nil
}

// readLine reads one reply line without its CRLF (connSyncReadLine).
func (cs *migrateSocket) readLine(timeout time.Duration) (string, error) {
	cs.conn.SetReadDeadline(time.Now().Add(timeout))
	line, err := cs.r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = line[:len(line)-1]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	if len(line) == 0 {
		return "", errors.New("empty reply line")
	}
	return line, nil
}

func appendBulkArg(b []byte, s []byte) []byte { return resp.AppendBulk(b, s) }

func cmdMigrate(c *Ctx, argv [][]byte) {
	copyOpt, replace := false, false
	var username, password []byte
	firstKey, numKeys := 3, 1
	for j := 6; j < len(argv); j++ {
		more := len(argv) - 1 - j
		switch a := argv[j]; {
		case EqualFold(a, "copy"):
			copyOpt = true
		case EqualFold(a, "replace"):
			replace = true
		case EqualFold(a, "auth"):
			if more < 1 {
				c.Err(ErrSyntax)
				return
			}
			j++
			password = argv[j]
		case EqualFold(a, "auth2"):
			if more < 2 {
				c.Err(ErrSyntax)
				return
			}
			username, password = argv[j+1], argv[j+2]
			j += 2
		case EqualFold(a, "keys"):
			if len(argv[3]) != 0 {
				c.Err(errMigrateKeys)
				return
			}
			firstKey, numKeys = j+1, len(argv)-j-1
			j = len(argv)
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	timeoutMs, ok := ParseInt(argv[5])
	if !ok {
		c.Err(ErrNotInt)
		return
	}
	dbid, ok := ParseInt(argv[4])
	if !ok {
		c.Err(ErrNotInt)
		return
	}
	if timeoutMs <= 0 {
		timeoutMs = 1000
	}
	timeout := time.Duration(timeoutMs) * time.Millisecond

	// The keys that exist (lookupKeyRead).
	keys := make([][]byte, 0, numKeys)
	for j := 0; j < numKeys; j++ {
		k := argv[firstKey+j]
		if c.DBOf(k).Read(k) >= 0 {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		c.Simple("NOKEY")
		return
	}

	host, port := string(argv[1]), string(argv[2])
	name := host + ":" + port
	mayRetry := true
	for {
		cs := migrateTake(name)
		if cs == nil {
			var err error
			cs, err = migrateDial(host, port, timeout)
			if err != nil {
				c.Err("IOERR error or timeout connecting to the client")
				return
			}
		}
		cs.lastUse = time.Now()

		var cmd []byte
		if password != nil {
			if username != nil {
				cmd = resp.AppendArrayLen(cmd, 3)
				cmd = appendBulkArg(cmd, []byte("AUTH"))
				cmd = appendBulkArg(cmd, username)
			} else {
				cmd = resp.AppendArrayLen(cmd, 2)
				cmd = appendBulkArg(cmd, []byte("AUTH"))
			}
			cmd = appendBulkArg(cmd, password)
		}
		sel := cs.lastDB != dbid
		if sel {
			cmd = resp.AppendArrayLen(cmd, 2)
			cmd = appendBulkArg(cmd, []byte("SELECT"))
			cmd = appendBulkArg(cmd, strconv.AppendInt(nil, dbid, 10))
		}
		sent := keys[:0:0]
		now := time.Now().UnixMilli()
		for _, k := range keys {
			db := c.DBOf(k)
			slot := db.Lookup(k)
			if slot < 0 {
				continue
			}
			var ttl int64
			if exp := db.Expiry(slot); exp != 0 {
				ttl = exp - now
				if ttl < 0 {
					continue
				}
				ttl = max(ttl, 1)
			}
			payload, err := db.DumpPayload(slot)
			if err != nil { // a stream, until the RDB codec writes them
				migratePut(name, cs)
				c.Err(errDumpNotAvail)
				return
			}
			sent = append(sent, k)
			n := 4
			if replace {
				n = 5
			}
			cmd = resp.AppendArrayLen(cmd, n)
			cmd = appendBulkArg(cmd, argRESTORE)
			cmd = appendBulkArg(cmd, k)
			cmd = appendBulkArg(cmd, strconv.AppendInt(nil, ttl, 10))
			cmd = appendBulkArg(cmd, payload)
			if replace {
				cmd = appendBulkArg(cmd, argREPLACE)
			}
		}

		// Write in 64 KB chunks, each within the timeout.
		var ioErr error
		writeErr := false
		for pos := 0; pos < len(cmd) && ioErr == nil; {
			end := min(pos+64<<10, len(cmd))
			cs.conn.SetWriteDeadline(time.Now().Add(timeout))
			var n int
			n, ioErr = cs.conn.Write(cmd[pos:end])
			pos += n
			writeErr = ioErr != nil
		}
		var authReply, selReply string
		if ioErr == nil && password != nil {
			authReply, ioErr = cs.readLine(timeout)
		}
		if ioErr == nil && sel {
			selReply, ioErr = cs.readLine(timeout)
		}
		if ioErr != nil {
			// socket_err: close, and retry once unless it timed out.
			cs.conn.Close()
			if !errors.Is(ioErr, os.ErrDeadlineExceeded) && mayRetry {
				mayRetry = false
				continue
			}
			c.Err(migrateIOErr(writeErr))
			return
		}

		targetErr, socketErr := false, false
		var acked [][]byte
		j := 0
		for ; j < len(sent); j++ {
			line, err := cs.readLine(timeout)
			if err != nil {
				socketErr, ioErr = true, err
				break
			}
			if password != nil && authReply[0] == '-' || sel && selReply[0] == '-' || line[0] == '-' {
				if !targetErr {
					cs.lastDB = -1
					msg := line
					if password != nil && authReply[0] == '-' {
						msg = authReply
					} else if sel && selReply[0] == '-' {
						msg = selReply
					}
					targetErr = true
					c.Err("ERR Target instance replied with error: " + msg[1:])
				}
				continue
			}
			if !copyOpt {
				db := c.DBOf(sent[j])
				if slot := db.Lookup(sent[j]); slot >= 0 {
					db.Delete(slot)
				}
				db.Notify(NotifyGeneric, "del", sent[j])
				acked = append(acked, sent[j])
			}
		}
		if !targetErr && socketErr && j == 0 && mayRetry && !errors.Is(ioErr, os.ErrDeadlineExceeded) {
			cs.conn.Close()
			mayRetry = false
			continue
		}
		if len(acked) > 0 {
			c.Propagate(append([][]byte{argDEL}, acked...)...)
			c.Prop.Dirty += len(acked) - 1
		}
		if socketErr {
			cs.conn.Close()
			if !targetErr {
				c.Err(migrateIOErr(false))
			}
			return
		}
		if !targetErr {
			cs.lastDB = dbid
			c.OK()
		}
		cs.lastUse = time.Now()
		migratePut(name, cs)
		return
	}
}

func migrateIOErr(writing bool) string {
	if writing {
		return "IOERR error or timeout writing to target instance"
	}
	return "IOERR error or timeout reading to target instance"
}
