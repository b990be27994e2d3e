package rdb

import (
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"strconv"
)

// Handler receives what Read finds, in file order. A nil field ignores
// its items; an error a function returns stops Read and is returned as is.
type Handler struct {
	Aux       func(name, value []byte) error
	SelectDB  func(db int) error
	ResizeDB  func(dbSize, expiresSize uint64) error
	Key       func(e *Entry) error // e is reused: keep its slices, not e
	Function  func(code string) error
	ModuleAux func(moduleID uint64, moduleName string) error // skipped data, for the caller to log
	Empty     func(key []byte)                               // an empty collection skipped (key is reused)
}

// Summary is what Read reports once the file ended well.
type Summary struct {
	Version  int    // the file's RDB version
	Checksum uint64 // the CRC64 in the file (0: none or disabled)
	Checked  bool   // the checksum was verified
	Keys     int    // keys handed to Handler.Key
	Empty    int    // empty collections skipped, as Redis skips them (never streams)
	// Size is the bytes the file took, up to its checksum: what follows
	// (the commands after an AOF's RDB preamble) is not read.
	Size int64
}

// Read parses a whole RDB file, versions 1 to Version, from r.
func Read(r io.Reader, h *Handler) (*Summary, error) {
	return read(newReaderDecoder(r), h)
}

// Parse is Read over a file held in memory.
func Parse(b []byte, h *Handler) (*Summary, error) {
	return read(newBytesDecoder(b), h)
}

func read(d *decoder, h *Handler) (*Summary, error) {
	if h == nil {
		h = &Handler{}
	}
	s := &Summary{}
	at := int64(0)
	fail := func(err error) (*Summary, error) {
		if _, ok := err.(*Error); ok {
			return nil, err
		}
		return nil, &Error{Offset: at, Err: err}
	}
	magic, err := d.view(9)
	if err != nil {
		return fail(err)
	}
	if string(magic[:5]) != "REDIS" {
		return fail(ErrMagic)
	}
	ver, err := strconv.Atoi(string(magic[5:]))
	if err != nil || ver < 1 || ver > Version || magic[5] < '0' || magic[5] > '9' {
		return fail(fmt.Errorf("%w %q", ErrVersion, magic[5:]))
	}
	s.Version = ver
	e := &Entry{Idle: -1, Freq: -1}
	for {
		at = d.offset()
		op, err := d.byte()
		if err != nil {
			return fail(err)
		}
		switch op {
		case OpEOF:
			if ver >= 5 {
				sum := d.checksum()
				want, err := d.le(8)
				if err != nil {
					return fail(err)
				}
				s.Checksum = want
				if want != 0 {
					if want != sum {
						return fail(fmt.Errorf("%w: file has %016x, computed %016x", ErrChecksum, want, sum))
					}
					s.Checked = true
				}
			}
			s.Size = d.offset()
			return s, nil
		case OpSelectDB:
			db, err := d.length()
			if err != nil {
				return fail(err)
			}
			if db > math.MaxInt32 {
				return fail(fmt.Errorf("database number %d out of range", db))
			}
			e.DB = int(db)
			if h.SelectDB != nil {
				if err := h.SelectDB(int(db)); err != nil {
					return nil, err
				}
			}
		case OpResizeDB:
			size, err := d.length()
			if err != nil {
				return fail(err)
			}
			exp, err := d.length()
			if err != nil {
				return fail(err)
			}
			if h.ResizeDB != nil {
				if err := h.ResizeDB(size, exp); err != nil {
					return nil, err
				}
			}
		case OpAux:
			name, err := d.str()
			if err != nil {
				return fail(err)
			}
			val, err := d.str()
			if err != nil {
				return fail(err)
			}
			if h.Aux != nil {
				if err := h.Aux(name, val); err != nil {
					return nil, err
				}
			}
		case OpExpireTimeMS:
			v, err := d.le(8)
			if err != nil {
				return fail(err)
			}
			e.ExpireMS, e.HasExpire = int64(v), true
		case OpExpireTime:
			v, err := d.le(4)
			if err != nil {
				return fail(err)
			}
			e.ExpireMS, e.HasExpire = int64(int32(uint32(v)))*1000, true
		case OpIdle:
			v, err := d.length()
			if err != nil {
				return fail(err)
			}
			e.Idle = int64(min(v, math.MaxInt64))
		case OpFreq:
			v, err := d.byte()
			if err != nil {
				return fail(err)
			}
			e.Freq = int(v)
		case OpFunction2:
			code, err := d.str()
			if err != nil {
				return fail(err)
			}
			if h.Function != nil {
				if err := h.Function(string(code)); err != nil {
					return nil, err
				}
			}
		case OpFunction:
			code, err := readOldFunction(d)
			if err != nil {
				return fail(err)
			}
			if h.Function != nil {
				if err := h.Function(code); err != nil {
					return nil, err
				}
			}
		case OpModuleAux:
			id, err := skipModuleAux(d)
			if err != nil {
				return fail(err)
			}
			if h.ModuleAux != nil {
				if err := h.ModuleAux(id, moduleTypeName(id)); err != nil {
					return nil, err
				}
			}
		default:
			key, err := d.str()
			if err != nil {
				return fail(err)
			}
			v, err := readValue(d, op)
			if err != nil {
				if _, ok := err.(*Error); ok {
					return nil, err
				}
				return nil, &Error{Offset: at, Err: err, InValue: true, Type: op, Key: append([]byte(nil), key...)}
			}
			if v.empty() {
				s.Empty++
				if h.Empty != nil {
					h.Empty(key)
				}
			} else {
				e.Key, e.Value = key, v
				if h.Key != nil {
					if err := h.Key(e); err != nil {
						return nil, err
					}
				}
				s.Keys++
			}
			db := e.DB
			*e = Entry{DB: db, Idle: -1, Freq: -1}
		}
	}
}

// skipModuleAux reads a MODULE_AUX item past its opcode, as
// redis-check-rdb does, and returns its module id: the id, the "when"
// (an unsigned-integer opcode and a length), then annotated data.
func skipModuleAux(d *decoder) (uint64, error) {
	id, err := d.length()
	if err != nil {
		return 0, err
	}
	whenOp, err := d.length()
	if err != nil {
		return 0, err
	}
	if whenOp != moduleOpUInt {
		return 0, fmt.Errorf("module '%s' aux data: bad when opcode %d", moduleTypeName(id), whenOp)
	}
	if _, err := d.length(); err != nil {
		return 0, err
	}
	return id, skipModuleValue(d, id)
}

// skipModuleValue skips annotated module data up to its EOF opcode.
func skipModuleValue(d *decoder, id uint64) error {
	for {
		op, err := d.length()
		if err != nil {
			return err
		}
		switch op {
		case moduleOpEOF:
			return nil
		case moduleOpSInt, moduleOpUInt:
			_, err = d.length()
		case moduleOpFloat:
			_, err = d.view(4)
		case moduleOpDouble:
			_, err = d.view(8)
		case moduleOpString:
			_, err = d.str()
		default:
			err = fmt.Errorf("module '%s' data: unknown opcode %d", moduleTypeName(id), op)
		}
		if err != nil {
			return err
		}
	}
}

// readValue reads a value of RDB type t.
func readValue(d *decoder, t byte) (Value, error) {
	v := Value{Type: t}
	switch t {
	case TypeString:
		s, err := d.str()
		v.Kind, v.Str = KindString, s
		return v, err
	case TypeList, TypeSet:
		n, err := d.count(1)
		if err != nil {
			return v, err
		}
		v.Kind = KindList
		if t == TypeSet {
			v.Kind = KindSet
		}
		v.Items = make([][]byte, 0, d.capFor(n, 1))
		for i := uint64(0); i < n; i++ {
			s, err := d.str()
			if err != nil {
				return v, err
			}
			v.Items = append(v.Items, s)
		}
		if t == TypeSet {
			return v, checkDups(v.Items, 1)
		}
		return v, nil
	case TypeZSet, TypeZSet2:
		n, err := d.count(2)
		if err != nil {
			return v, err
		}
		v.Kind = KindZSet
		v.ZSet = make([]ZMember, 0, d.capFor(n, 2))
		for i := uint64(0); i < n; i++ {
			m, err := d.str()
			if err != nil {
				return v, err
			}
			var score float64
			if t == TypeZSet2 {
				u, err := d.le(8)
				if err != nil {
					return v, err
				}
				score = math.Float64frombits(u)
			} else if score, err = readTextDouble(d); err != nil {
				return v, err
			}
			if math.IsNaN(score) {
				return v, ErrNaNScore
			}
			v.ZSet = append(v.ZSet, ZMember{m, score})
		}
		return v, checkZSetDups(v.ZSet)
	case TypeHash:
		n, err := d.count(2)
		if err != nil {
			return v, err
		}
		v.Kind = KindHash
		v.Hash = make([]HashField, 0, d.capFor(n, 2))
		for i := uint64(0); i < n; i++ {
			f, err := d.str()
			if err != nil {
				return v, err
			}
			val, err := d.str()
			if err != nil {
				return v, err
			}
			v.Hash = append(v.Hash, HashField{f, val})
		}
		return v, checkHashDups(v.Hash)
	case TypeListQuicklist, TypeListQuicklist2:
		n, err := d.count(2)
		if err != nil {
			return v, err
		}
		v.Kind = KindList
		for i := uint64(0); i < n; i++ {
			container := uint64(quicklistPacked)
			if t == TypeListQuicklist2 {
				if container, err = d.length(); err != nil {
					return v, err
				}
				if container != quicklistPlain && container != quicklistPacked {
					return v, fmt.Errorf("quicklist node container %d", container)
				}
			}
			blob, err := d.str()
			if err != nil {
				return v, err
			}
			if len(blob) == 0 {
				// Redis's rdbLoadObject refuses an empty node string
				// (encoded_len 0), plain or packed.
				return v, ErrBadBlob
			}
			if container == quicklistPlain {
				v.Items = append(v.Items, blob)
				continue
			}
			parse := parseListpackInto
			if t == TypeListQuicklist {
				parse = parseZiplistInto
			}
			items, err := parse(d.scratch[:0], blob)
			if err != nil {
				return v, err
			}
			d.scratch = items
			// Redis skips empty nodes silently.
			v.Items = append(v.Items, items...)
		}
		return v, nil
	case TypeHashZipmap, TypeListZiplist, TypeSetIntset, TypeZSetZiplist, TypeHashZiplist, TypeHashListpack, TypeZSetListpack:
		blob, err := d.str()
		if err != nil {
			return v, err
		}
		return blobValue(t, blob, &d.scratch)
	case TypeStreamListpacks, TypeStreamListpacks2:
		st, err := readStream(d, t)
		v.Kind, v.Strm = KindStream, st
		if err != nil {
			v.Strm = nil
		}
		return v, err
	case TypeModulePreGA, TypeModule2:
		id, err := d.length()
		if err != nil {
			return v, err
		}
		return v, &ModuleValueError{ID: id, Name: moduleTypeName(id)}
	default:
		return v, &UnsupportedTypeError{Type: t}
	}
}

// blobValue decodes a value stored as one blob. A hash's or sorted set's
// elements are parsed into scratch, which only lives until they are paired
// (a slice per value was a fifth of a load's allocations of scanned memory).
func blobValue(t byte, blob []byte, scratch *[][]byte) (Value, error) {
	v := Value{Type: t}
	var items [][]byte
	var err error
	switch t {
	case TypeHashZipmap:
		items, err = parseZipmap(blob)
	case TypeSetIntset:
		items, err = parseIntset(blob)
	case TypeHashListpack, TypeZSetListpack:
		items, err = parseListpackInto((*scratch)[:0], blob)
		*scratch = items
	case TypeListZiplist:
		items, err = parseZiplist(blob)
	default:
		items, err = parseZiplistInto((*scratch)[:0], blob)
		*scratch = items
	}
	if err != nil {
		return v, err
	}
	switch t {
	case TypeListZiplist:
		v.Kind, v.Items = KindList, items
		return v, nil
	case TypeSetIntset:
		v.Kind, v.Items = KindSet, items
		return v, nil
	case TypeZSetZiplist, TypeZSetListpack:
		if len(items)%2 != 0 {
			return v, ErrBadBlob
		}
		v.Kind = KindZSet
		v.ZSet = make([]ZMember, 0, len(items)/2)
		for i := 0; i < len(items); i += 2 {
			score, err := strconv.ParseFloat(string(items[i+1]), 64)
			if err != nil || math.IsNaN(score) {
				return v, ErrBadBlob
			}
			v.ZSet = append(v.ZSet, ZMember{items[i], score})
		}
		return v, checkZSetDups(v.ZSet)
	default: // hashes
		if len(items)%2 != 0 {
			return v, ErrBadBlob
		}
		v.Kind = KindHash
		v.Hash = make([]HashField, 0, len(items)/2)
		for i := 0; i < len(items); i += 2 {
			v.Hash = append(v.Hash, HashField{items[i], items[i+1]})
		}
		return v, checkHashDups(v.Hash)
	}
}

// readTextDouble reads a ZSET (type 3) score: a length byte, 253 for nan,
// 254 for +inf, 255 for -inf, else that many bytes of decimal text.
func readTextDouble(d *decoder) (float64, error) {
	n, err := d.byte()
	if err != nil {
		return 0, err
	}
	switch n {
	case 253:
		return math.NaN(), nil
	case 254:
		return math.Inf(1), nil
	case 255:
		return math.Inf(-1), nil
	}
	p, err := d.view(int(n))
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(string(p), 64)
	if err != nil {
		return 0, fmt.Errorf("bad zset score %q", p)
	}
	return f, nil
}

// smallDups is the size up to which duplicates are looked for by pairs:
// a map per value was, with the shard's own check, a load's biggest
// allocation after the strings (a map of 10 entries per set, hash and
// sorted set of the bench's 1M keys: 0.3 s of the parser's 0.84 s).
const smallDups = 32

var dupSeed = maphash.MakeSeed()

// dupAt reports the first of the n strings at(i) equal to an earlier one.
func dupAt(n int, at func(i int) []byte) ([]byte, bool) {
	if n < 2 {
		return nil, false
	}
	if n <= smallDups {
		// By pairs of hashes, the bytes compared only when two hashes
		// are equal: comparing the bytes of every pair (45 calls through
		// at for 10 members) was 0.06 s of a 0.5 s parse of 1M mixed keys.
		var hs [smallDups]uint64
		for i := 0; i < n; i++ {
			a := at(i)
			h := maphash.Bytes(dupSeed, a)
			for j := 0; j < i; j++ {
				if hs[j] == h && string(a) == string(at(j)) {
					return a, true
				}
			}
			hs[i] = h
		}
		return nil, false
	}
	seen := make(map[string]struct{}, n)
	for i := 0; i < n; i++ {
		k := at(i)
		if _, ok := seen[string(k)]; ok {
			return k, true
		}
		seen[string(k)] = struct{}{}
	}
	return nil, false
}

func checkDups(items [][]byte, _ int) error {
	if s, dup := dupAt(len(items), func(i int) []byte { return items[i] }); dup {
		return fmt.Errorf("%w %q", ErrDuplicate, s)
	}
	return nil
}

func checkZSetDups(z []ZMember) error {
	if s, dup := dupAt(len(z), func(i int) []byte { return z[i].Member }); dup {
		return fmt.Errorf("%w %q", ErrDuplicate, s)
	}
	return nil
}

func checkHashDups(h []HashField) error {
	if s, dup := dupAt(len(h), func(i int) []byte { return h[i].Field }); dup {
		return fmt.Errorf("%w %q", ErrDuplicate, s)
	}
	return nil
}
