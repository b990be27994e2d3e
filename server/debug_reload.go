package server

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"strconv"

	"github.com/redshard/redshard/aof"
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

// digest is Redis's DEBUG DIGEST idea: a 20-byte value equal for equal data
// sets, mixed by XOR so that the order keys are visited in does not matter.
type digest [20]byte

func (d *digest) xor(b []byte) {
	h := sha1.Sum(b)
	for i := range d {
		d[i] ^= h[i]
	}
}

// chain mixes b into d in order (for ordered values).
func (d *digest) chain(b []byte) {
	h := sha1.New()
	h.Write(d[:])
	h.Write(b)
	copy(d[:], h.Sum(nil))
}

// valueDigest digests a key's value from the commands that recreate it:
// ordered for lists, element by element XOR for sets, hashes and sorted
// sets (each element with its field value or score).
func valueDigest(db *shard.DB, slot int32) digest {
	var d digest
	typ := db.Type(slot)
	if typ == shard.TypeString {
		d.chain(db.Str(slot))
		return d
	}
	for _, c := range db.Obj(slot).Dump(db.Key(slot)) {
		elems := c[2:]
		switch typ {
		case shard.TypeList:
			for _, e := range elems {
				d.chain(e)
			}
		case shard.TypeHash:
			for i := 0; i+1 < len(elems); i += 2 {
				d.xor(append(append(append([]byte(nil), elems[i]...), 0), elems[i+1]...))
			}
		case shard.TypeZSet:
			for i := 0; i+1 < len(elems); i += 2 {
				score, _ := strconv.ParseFloat(string(elems[i]), 64)
				d.xor(strconv.AppendFloat(append(append([]byte(nil), elems[i+1]...), 0), score, 'g', 17, 64))
			}
		default:
			for _, e := range elems {
				d.xor(e)
			}
		}
	}
	return d
}

// debugDigest is DEBUG DIGEST: every key of every database with its type,
// value and expiry; 40 zeros for an empty data set.
func debugDigest(x *Exec) {
	var final digest
	for _, sh := range x.Shards {
		for dbi, db := range sh.DBs {
			for slot := int32(0); slot < db.Slots(); slot++ {
				if !db.Live(slot) {
					continue
				}
				v := valueDigest(db, slot)
				b := strconv.AppendInt(nil, int64(dbi), 10)
				b = append(b, 0)
				b = append(b, db.Key(slot)...)
				b = append(b, 0, byte(db.Type(slot)))
				b = append(b, v[:]...)
				if exp := db.Expiry(slot); exp != 0 {
					b = strconv.AppendInt(append(b, "!!expire!!"...), exp, 10)
				}
				final.xor(b)
			}
		}
	}
	x.BulkStr(hex.EncodeToString(final[:]))
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
			d = valueDigest(db, slot)
		}
		x.BulkStr(hex.EncodeToString(d[:]))
	}
}
