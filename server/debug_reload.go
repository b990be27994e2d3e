package server

import (
	"bufio"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"

	"github.com/redshard/redshard/aof/rdb"
	"github.com/redshard/redshard/shard"
)

// DEBUG RELOAD, DEBUG DIGEST and DEBUG DIGEST-VALUE, which Redis's tests use
// to check that a value survives a save and load, and that two data sets
// are equal.
//
// DEBUG RELOAD is Redis's: the data set is saved to dbfilename (unless
// NOSAVE), emptied with the function libraries (unless NOFLUSH) and loaded
// back from the file (MERGE: a key or library already there is replaced,
// else it is an error). It runs with every loop parked (snapshot.go's
// saveParked, rdbload.go's readRDB) and logs nothing to the AOF: the data
// set is the file's.

// debugReload is DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE].
func debugReload(x *Exec, argv [][]byte) {
	merge, flush, save := false, true, true
	for _, a := range argv[2:] {
		switch {
		case shard.EqualFold(a, "merge"):
			merge = true
		case shard.EqualFold(a, "noflush"):
			flush = false
		case shard.EqualFold(a, "nosave"):
			save = false
		default:
			x.Err("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.")
			return
		}
	}
	srv := x.srv
	if save {
		if srv.save.active.Load() {
			srv.abortSnapshot()
		}
		if err := srv.saveParked(); err != nil {
			x.Err("ERR")
			return
		}
	}
	if flush {
		for _, sh := range srv.shards {
			sh.FlushAll()
		}
		srv.funcs.flush()
	}
	if err := srv.reloadRDB(merge); err != nil {
		x.Err("ERR Error trying to load the RDB dump, check server logs.")
		srv.log.Warningf("DEBUG RELOAD: %v", err)
		return
	}
	srv.log.Warningf("DB reloaded by DEBUG RELOAD")
	x.OK()
}

// reloadRDB loads dbfilename into the live shards; every loop is parked.
func (srv *Server) reloadRDB(merge bool) error { return srv.reloadRDBFile(srv.rdbPath(), merge) }

// reloadRDBFile loads the RDB file at path into the live shards (DEBUG
// RELOAD, a replica's full sync); every loop is parked.
func (srv *Server) reloadRDBFile(path string, merge bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, sh := range srv.shards {
		sh.Loading = true
	}
	var fl funcLoad
	_, err = srv.readRDBMerge(srv.shards, bufio.NewReaderSize(f, 256<<10), &fl, merge)
	for _, sh := range srv.shards {
		sh.Loading = false
		sh.UsedMemory()
	}
	if err != nil {
		return err
	}
	var libs []*funcLib
	for _, name := range fl.order {
		lib, msg := compileLib(fl.code[name])
		if msg != "" {
			return errors.New(msg)
		}
		libs = append(libs, lib)
	}
	if len(libs) > 0 {
		if msg := srv.funcs.addAs(libs, merge, false, "'"); msg != "" {
			return errors.New(msg)
		}
	}
	return nil
}

// digest is Redis's DEBUG DIGEST (debug.c): 20 bytes, equal for equal
// data sets and equal to redis-server's for the same data. Unordered
// collections XOR their elements' digests; ordered ones mix them in.
type digest [20]byte

// xor is Redis's xorDigest: d ^= SHA1(b).
func (d *digest) xor(b []byte) {
	h := sha1.Sum(b)
	for i := range d {
		d[i] ^= h[i]
	}
}

// mix is Redis's mixDigest: d = SHA1(d ^ SHA1(b)).
func (d *digest) mix(b []byte) {
	d.xor(b)
	*d = sha1.Sum(d[:])
}

// Redis's object type numbers (OBJ_*), which the digest mixes in.
var digestTypes = map[rdb.Kind]uint32{rdb.KindString: 0, rdb.KindList: 1, rdb.KindSet: 2, rdb.KindZSet: 3,
	rdb.KindHash: 4, rdb.KindStream: 6}

// digestScore is C's "%.17g".
func digestScore(f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return []byte("inf")
	case math.IsInf(f, -1):
		return []byte("-inf")
	}
	return strconv.AppendFloat(nil, f, 'g', 17, 64)
}

// objectDigest is Redis's xorObjectDigest: mixes a key's value (type,
// elements, the fact of an expiry) into d.
func objectDigest(d *digest, db *shard.DB, slot int32) {
	v := db.RDBValue(slot)
	var aux [4]byte
	binary.BigEndian.PutUint32(aux[:], digestTypes[v.Kind])
	d.mix(aux[:])
	switch v.Kind {
	case rdb.KindString:
		d.mix(v.Str)
	case rdb.KindList:
		for _, e := range v.Items {
			d.mix(e)
		}
	case rdb.KindSet:
		for _, e := range v.Items {
			d.xor(e)
		}
	case rdb.KindZSet:
		for _, m := range v.ZSet {
			var e digest
			e.mix(m.Member)
			e.mix(digestScore(m.Score))
			d.xor(e[:])
		}
	case rdb.KindHash:
		for _, f := range v.Hash {
			var e digest
			e.mix(f.Field)
			e.mix(f.Value)
			d.xor(e[:])
		}
	case rdb.KindStream:
		for _, en := range v.Strm.Entries {
			d.mix(fmt.Appendf(nil, "%d.%d", en.ID.Ms, en.ID.Seq))
			for _, f := range en.Fields {
				d.mix(f)
			}
		}
	}
	if db.Expiry(slot) != 0 {
		d.xor([]byte("!!expire!!"))
	}
}

// debugDigest is DEBUG DIGEST (computeDatasetDigest): per non-empty
// database in order, its number mixed in, then every key's digest (the
// key mixed, then its value) XORed; 40 zeros for an empty data set.
func debugDigest(x *Exec) {
	var final digest
	if len(x.Shards) > 0 {
		for dbi := range x.Shards[0].DBs {
			n := 0
			for _, sh := range x.Shards {
				n += sh.DBs[dbi].Len()
			}
			if n == 0 {
				continue
			}
			var aux [4]byte
			binary.BigEndian.PutUint32(aux[:], uint32(dbi))
			final.mix(aux[:])
			for _, sh := range x.Shards {
				db := sh.DBs[dbi]
				for slot := int32(0); slot < db.Slots(); slot++ {
					if !db.Live(slot) {
						continue
					}
					var d digest
					d.mix(db.Key(slot))
					objectDigest(&d, db, slot)
					final.xor(d[:])
				}
			}
		}
	}
	x.Simple(hex.EncodeToString(final[:]))
}

// debugDigestValue is DEBUG DIGEST-VALUE key...: each value's digest, 40
// zeros for a missing key.
func debugDigestValue(x *Exec, keys [][]byte) {
	x.Array(len(keys))
	for _, k := range keys {
		db := x.DBOf(k)
		slot := db.Peek(k)
		var d digest
		if slot >= 0 {
			objectDigest(&d, db, slot)
		}
		x.Simple(hex.EncodeToString(d[:]))
	}
}
