package shard

import (
	"errors"
	"strconv"

	"github.com/redshard/redshard/aof/rdb"
)

// DUMP, RESTORE and MIGRATE (Redis 7.0's cluster.c; MIGRATE is in
// migrate.go). Payloads are the RDB codec's (aof/rdb): a value's type
// byte and body, the RDB version and a CRC64, interchangeable with
// redis-server 7.0's.

var dumpCommands = []Command{
	{Name: "dump", Run: cmdDump},
	{Name: "restore", Run: cmdRestore},
	{Name: "restore-asking", Run: cmdRestore},
	{Name: "migrate", Run: cmdMigrate},
}

// Error replies of this file, as Redis spells them.
const (
	errBusyKey      = "BUSYKEY Target key name already exists."
	errDumpPayload  = "ERR DUMP payload version or checksum are wrong"
	errBadFormat    = "ERR Bad data format"
	errTTLValue     = "ERR Invalid TTL value, must be >= 0"
	errIdleTimeVal  = "ERR Invalid IDLETIME value, must be >= 0"
	errFreqValue    = "ERR Invalid FREQ value, must be >= 0 and <= 255"
	errMigrateKeys  = "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string"
	errDumpNotAvail = "ERR DUMP of a stream is not supported yet"
)

var (
	argABSTTL  = []byte("ABSTTL")
	argRESTORE = []byte("RESTORE")
	argREPLACE = []byte("REPLACE")
)

// DumpPayload returns the DUMP payload of a key's value, in the RDB type
// of its encoding (Redis's createDumpPayload).
func (db *DB) DumpPayload(slot int32) ([]byte, error) {
	v := db.RDBValue(slot)
	return rdb.EncodeDump(&v, db.RDBOptions(slot, db.sh.Cfg.RDBCompression.Load()))
}

// DUMP key
func cmdDump(c *Ctx, argv [][]byte) {
	db := c.DBOf(argv[1])
	slot := db.Read(argv[1])
	if slot < 0 {
		c.Null()
		return
	}
	p, err := db.DumpPayload(slot)
	if err != nil {
		// Only a stream, until the RDB codec writes streams (branch
		// rdbstream); redis-server DUMPs them.
		c.Err(errDumpNotAvail)
		return
	}
	c.Bulk(p)
}

// RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds]
// [FREQ frequency], and RESTORE-ASKING (the same outside a cluster).
func cmdRestore(c *Ctx, argv [][]byte) {
	var freq, idle int64 = -1, -1
	replace, absttl := false, false
	for j := 4; j < len(argv); j++ {
		more := len(argv) - j - 1
		switch a := argv[j]; {
		case EqualFold(a, "replace"):
			replace = true
		case EqualFold(a, "absttl"):
			absttl = true
		case EqualFold(a, "idletime") && more >= 1 && freq == -1:
			v, ok := ParseInt(argv[j+1])
			if !ok {
				c.Err(ErrNotInt)
				return
			}
			if v < 0 {
				c.Err(errIdleTimeVal)
				return
			}
			idle = v
			j++
		case EqualFold(a, "freq") && more >= 1 && idle == -1:
			v, ok := ParseInt(argv[j+1])
			if !ok {
				c.Err(ErrNotInt)
				return
			}
			if v < 0 || v > 255 {
				c.Err(errFreqValue)
				return
			}
			freq = v
			j++
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	key := argv[1]
	db := c.DBOf(key)
	if !replace && db.Write(key) >= 0 {
		c.Err(errBusyKey)
		return
	}
	ttl, ok := ParseInt(argv[2])
	if !ok {
		c.Err(ErrNotInt)
		return
	}
	if ttl < 0 {
		c.Err(errTTLValue)
		return
	}
	payload := argv[3]
	if _, err := rdb.CheckFooter(payload); err != nil {
		if !db.sh.Cfg.SkipChecksumValidation.Load() || len(payload) < 10 ||
			int(payload[len(payload)-10])|int(payload[len(payload)-9])<<8 > rdb.Version {
			c.Err(errDumpPayload)
			return
		}
		// DEBUG SET-SKIP-CHECKSUM-VALIDATION 1: the CRC is not checked.
		payload = rdb.AppendFooter(append([]byte(nil), payload[:len(payload)-10]...))
	}
	v, err := rdb.DecodeDump(payload)
	var b Built
	if err == nil {
		b, err = db.BuildValue(&v)
	}
	if err != nil {
		// An empty collection is refused silently (Redis's emptykey), but
		// for an empty zipmap, which fails zipmapValidateIntegrity.
		if db.sh.OnVerbose != nil && (!errors.Is(err, rdb.ErrEmptyValue) || payload[0] == rdb.TypeHashZipmap) {
			db.sh.OnVerbose("Internal error in RDB reading offset 0, function at rdb.c:0 -> " + corruptMessage(payload[0], err))
		}
		c.Err(errBadFormat)
		return
	}
	deleted := false
	if replace {
		if old := db.Write(key); old >= 0 {
			db.Delete(old)
			deleted = true
		}
	}
	if ttl != 0 && !absttl {
		ttl += c.Now()
	}
	if ttl != 0 && ttl <= c.Now() && !db.sh.Loading {
		// Already expired: nothing is added; a replaced key is deleted.
		if deleted {
			c.Propagate(argDEL, key)
			db.Notify(NotifyGeneric, "del", key)
		}
		c.OK()
		return
	}
	slot := db.AddBuilt(key, b)
	if ttl != 0 {
		db.SetExpiry(slot, ttl)
		if !absttl {
			// Logged with the absolute expiry, as Redis rewrites it.
			nargv := make([][]byte, 0, len(argv)+1)
			nargv = append(nargv, argv[0], key, strconv.AppendInt(nil, ttl, 10))
			nargv = append(nargv, argv[3:]...)
			c.Propagate(append(nargv, argABSTTL)...)
		}
	}
	db.SetAccess(slot, freq, idle)
	db.Notify(NotifyGeneric, "restore", key)
	c.OK()
	if !c.Prop.Custom {
		c.Dirty(1)
	}
}

// corruptMessage is what Redis's rdbLoadObject reports (rdbReportCorruptRDB)
// for a payload of RDB type t that failed with err.
func corruptMessage(t byte, err error) string { return CorruptMessage(int(t), err) }

// CorruptMessage is what Redis's rdbLoadObject reports (rdbReportCorruptRDB)
// for a value of RDB type t (-1: unknown) that failed to load with err, for
// RESTORE's verbose line and the log of a failed load.
func CorruptMessage(ti int, err error) string {
	t := byte(ti)
	if ti < 0 || ti > 255 {
		t = 255
	}
	integrity := map[byte]string{
		rdb.TypeHashZipmap: "Zipmap", rdb.TypeListZiplist: "List ziplist", rdb.TypeSetIntset: "Intset",
		rdb.TypeZSetZiplist: "Zset ziplist", rdb.TypeHashZiplist: "Hash ziplist", rdb.TypeListQuicklist: "Ziplist",
		rdb.TypeStreamListpacks: "Stream listpack", rdb.TypeHashListpack: "Hash listpack",
		rdb.TypeZSetListpack: "Zset listpack", rdb.TypeListQuicklist2: "Listpack",
		rdb.TypeStreamListpacks2: "Stream listpack", rdb.TypeStreamListpacks3: "Stream listpack",
	}
	switch {
	case errors.Is(err, rdb.ErrDuplicateConsumer):
		return "Duplicate stream consumer detected."
	case errors.Is(err, rdb.ErrDuplicate) && t == rdb.TypeHashListpack:
		// Redis finds these when it converts the listpack to a hash
		// table (unsanitized, it panics: "listpack with dup elements").
		return "Hash listpack integrity check failed: listpack with dup elements."
	case (errors.Is(err, rdb.ErrBadBlob) || errors.Is(err, rdb.ErrDuplicate) || t == rdb.TypeHashZipmap) && integrity[t] != "":
		return integrity[t] + " integrity check failed."
	case errors.Is(err, rdb.ErrDuplicate) && t == rdb.TypeSet:
		return "Duplicate set members detected"
	case errors.Is(err, rdb.ErrDuplicate) && t == rdb.TypeHash:
		return "Duplicate hash fields detected"
	case errors.Is(err, rdb.ErrDuplicate):
		return "Duplicate zset fields detected"
	case errors.Is(err, rdb.ErrNaNScore):
		return "Zset with NAN score detected"
	}
	var ut *rdb.UnsupportedTypeError
	if errors.As(err, &ut) {
		return "Unknown RDB encoding type " + strconv.Itoa(int(t))
	}
	return err.Error()
}
