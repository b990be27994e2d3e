package server

import (
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/redshard/redshard/aof"
	"github.com/redshard/redshard/aof/rdb"
	"github.com/redshard/redshard/shard"
)

// DEBUG RELOAD, DEBUG DIGEST and DEBUG DIGEST-VALUE, which Redis's tests use
// to check that a value survives a save and load, and that two data sets
// are equal.
//
// redshard has no RDB: DEBUG RELOAD serializes every shard with the AOF
// rewrite's image (the commands that recreate each key, shard/rewrite.go),
// empties the shards and replays the image — the same round trip through a
// serialized form that Redis's save and load make, choosing encodings anew.
// It runs with every loop parked and logs nothing: the data set does not
// change.

// debugReload is DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE]; the options are
// accepted, and the reload is always a full one.
func debugReload(x *Exec, argv [][]byte) {
	for _, a := range argv[2:] {
		if !shard.EqualFold(a, "merge") && !shard.EqualFold(a, "noflush") && !shard.EqualFold(a, "nosave") {
			x.Err("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.")
			return
		}
	}
	if err := x.srv.reloadInMemory(); err != nil {
		x.Err("ERR Error trying to load the RDB dump, check server logs.")
		x.srv.log.Warningf("DEBUG RELOAD: %v", err)
		return
	}
	x.srv.log.Noticef("DB reloaded by DEBUG RELOAD")
	x.OK()
}

type imageCmd struct {
	db   int
	argv [][]byte
}

func (srv *Server) reloadInMemory() error {
	for _, sh := range srv.shards {
		if sh.Rewriting() {
			return errors.New("an AOF rewrite is in progress")
		}
	}
	var image []imageCmd
	for _, sh := range srv.shards {
		sh.StartRewrite(func(db int, argv [][]byte) {
			cp := make([][]byte, len(argv))
			for i, a := range argv {
				cp[i] = append([]byte(nil), a...)
			}
			image = append(image, imageCmd{db, cp})
		})
		sh.RewriteAll()
	}
	for _, sh := range srv.shards {
		sh.FlushAll()
	}
	// Replay through the AOF loader: the image is a command log like any
	// other, with a SELECT before each database's commands.
	_, err := srv.loadLog(srv.shards, func(apply func([][]byte) error) (aof.LoadStats, error) {
		db := -1
		for _, c := range image {
			if c.db != db {
				db = c.db
				if err := apply([][]byte{[]byte("SELECT"), []byte(strconv.Itoa(db))}); err != nil {
					return aof.LoadStats{}, err
				}
			}
			if err := apply(c.argv); err != nil {
				return aof.LoadStats{}, err
			}
		}
		return aof.LoadStats{}, nil
	}, false)
	return err
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
