package rdb

import (
	"errors"
	"fmt"
)

// Value types of an RDB file or a DUMP payload (RDB_TYPE_*): the byte
// before a key, or the first byte of a DUMP payload.
const (
	TypeString           = 0
	TypeList             = 1 // a length, then the elements as strings (Redis < 3.2)
	TypeSet              = 2
	TypeZSet             = 3 // scores as length-prefixed text (Redis < 4.0)
	TypeHash             = 4
	TypeZSet2            = 5 // scores as binary little-endian doubles
	TypeModulePreGA      = 6
	TypeModule2          = 7
	TypeHashZipmap       = 9
	TypeListZiplist      = 10
	TypeSetIntset        = 11
	TypeZSetZiplist      = 12
	TypeHashZiplist      = 13
	TypeListQuicklist    = 14
	TypeStreamListpacks  = 15
	TypeHashListpack     = 16
	TypeZSetListpack     = 17
	TypeListQuicklist2   = 18
	TypeStreamListpacks2 = 19
	TypeSetListpack      = 20 // Redis 7.2 (RDB 11): not read
	TypeStreamListpacks3 = 21 // Redis 7.2 (RDB 11): not read
)

// Opcodes of an RDB file, in the place of a value type.
const (
	OpModuleAux    = 247
	OpIdle         = 248
	OpFreq         = 249
	OpAux          = 250
	OpResizeDB     = 251
	OpExpireTimeMS = 252
	OpExpireTime   = 253
	OpSelectDB     = 254
	OpEOF          = 255
)

// Quicklist 2 node containers.
const (
	quicklistPlain  = 1
	quicklistPacked = 2
)

// Module value opcodes (RDB_MODULE_OPCODE_*), of annotated module data.
const (
	moduleOpEOF    = 0
	moduleOpSInt   = 1
	moduleOpUInt   = 2
	moduleOpFloat  = 3
	moduleOpDouble = 4
	moduleOpString = 5
)

var typeNames = map[byte]string{
	TypeString: "string", TypeList: "list", TypeSet: "set", TypeZSet: "zset",
	TypeHash: "hash", TypeZSet2: "zset-2", TypeModulePreGA: "module-pre-ga",
	TypeModule2: "module-2", TypeHashZipmap: "hash-zipmap", TypeListZiplist: "list-ziplist",
	TypeSetIntset: "set-intset", TypeZSetZiplist: "zset-ziplist", TypeHashZiplist: "hash-ziplist",
	TypeListQuicklist: "list-quicklist", TypeStreamListpacks: "stream-listpacks",
	TypeHashListpack: "hash-listpack", TypeZSetListpack: "zset-listpack",
	TypeListQuicklist2: "list-quicklist-2", TypeStreamListpacks2: "stream-listpacks-2",
	TypeSetListpack: "set-listpack", TypeStreamListpacks3: "stream-listpacks-3",
}

// TypeName is the name of an RDB value type, "type N" for an unknown one.
func TypeName(t byte) string {
	if n, ok := typeNames[t]; ok {
		return n
	}
	return fmt.Sprintf("type %d", t)
}

// Kind is what a value is, whatever its encoding in the RDB.
type Kind uint8

const (
	KindString Kind = iota
	KindList
	KindSet
	KindZSet
	KindHash
	KindStream
)

func (k Kind) String() string {
	switch k {
	case KindString:
		return "string"
	case KindList:
		return "list"
	case KindSet:
		return "set"
	case KindZSet:
		return "zset"
	case KindHash:
		return "hash"
	case KindStream:
		return "stream"
	}
	return fmt.Sprintf("kind %d", uint8(k))
}

// ZMember is a sorted set member and its score.
type ZMember struct {
	Member []byte
	Score  float64
}

// HashField is a hash field and its value.
type HashField struct {
	Field, Value []byte
}

// Value is a decoded value in a neutral representation, whichever of
// Redis's encodings it was read from; callers build their own encoding
// from it. Only the field of its Kind is set. Integer elements of
// ziplists, listpacks and intsets come back as their decimal text. The
// reader refuses repeated members and fields; the writer expects none
// (Redis refuses a file or payload that has them).
type Value struct {
	Kind  Kind
	Str   []byte      // KindString
	Items [][]byte    // KindList (head to tail) and KindSet (in the file's order)
	ZSet  []ZMember   // KindZSet (in the file's order)
	Hash  []HashField // KindHash (in the file's order)
	Strm  *Stream     // KindStream
	// Type is the RDB type it was read from (TypeString ...); the writer
	// ignores it and chooses its own.
	Type byte
}

// Len is the number of elements of a collection, 1 for a string.
func (v *Value) Len() int {
	switch v.Kind {
	case KindList, KindSet:
		return len(v.Items)
	case KindZSet:
		return len(v.ZSet)
	case KindHash:
		return len(v.Hash)
	case KindStream:
		if v.Strm == nil {
			return 0
		}
		return len(v.Strm.Entries)
	}
	return 1
}

// empty reports a collection Redis would not load: streams are kept even
// without entries (their IDs, counters and groups are state).
func (v *Value) empty() bool { return v.Kind != KindStream && v.Len() == 0 }

// StreamID is a stream entry ID.
type StreamID struct{ Ms, Seq uint64 }

// StreamEntry is a live entry of a stream: its ID, and its fields and values
// in order (field, value, field, value ...).
type StreamEntry struct {
	ID     StreamID
	Fields [][]byte
}

// Stream is a stream with its consumer groups (RDB_TYPE_STREAM_LISTPACKS and
// _2). Entries are the live entries in ID order; deleted ones are not kept.
// Fields Redis 7.0 added (FirstID, MaxDeletedID, EntriesAdded, a group's
// EntriesRead) read from an RDB 9 file (type 15) are derived as Redis does
// when it loads one: EntriesAdded = Length, FirstID the first entry's ID
// (the maximal ID when there is none), MaxDeletedID 0-0, EntriesRead -1
// unless the group is at the stream's start or end
// (streamEstimateDistanceFromFirstEverEntry). A stream without entries is
// a value all the same (groups, IDs, counters).
//
// The writer expects what the reader guarantees (entries in ascending ID
// order up to LastID, each with field and value pairs; distinct group and
// consumer names; each pending ID of a group in its Pending and pending for
// exactly one consumer); it orders groups, consumers and PELs itself.
type Stream struct {
	Entries      []StreamEntry
	LastID       StreamID
	FirstID      StreamID
	MaxDeletedID StreamID
	EntriesAdded int64
	Groups       []StreamGroup
}

// StreamGroup is a consumer group: its last delivered ID, its entries-read
// counter (-1: invalid), its pending entries in ID order, and its consumers.
type StreamGroup struct {
	Name        []byte
	LastID      StreamID
	EntriesRead int64
	Pending     []StreamNACK
	Consumers   []StreamConsumer
}

// StreamNACK is a pending entry of a group: delivered, not acknowledged.
type StreamNACK struct {
	ID            StreamID
	DeliveryTime  int64 // Unix ms of the last delivery
	DeliveryCount int64
}

// StreamConsumer is a consumer of a group and the IDs of its pending entries
// (in ID order; each is in the group's Pending).
type StreamConsumer struct {
	Name     []byte
	SeenTime int64 // Unix ms
	Pending  []StreamID
}

// Entry is a key as Read reports it.
type Entry struct {
	DB        int // from the last SELECTDB (0 before any)
	Key       []byte
	ExpireMS  int64 // absolute Unix time in ms, when HasExpire (EXPIRETIME is converted)
	HasExpire bool
	Idle      int64 // LRU idle time in seconds (OpIdle), -1 when absent
	Freq      int   // LFU frequency counter (OpFreq), -1 when absent
	Value     Value
}

// Error is malformed input: where, and what was wrong.
type Error struct {
	Offset int64 // of the item that failed, from the start of the input
	Err    error
	// InValue: the failure was in the value of Key, of RDB type Type
	// (what redis-check-rdb reports beside it).
	InValue bool
	Type    byte
	Key     []byte
}

func (e *Error) Error() string { return fmt.Sprintf("rdb: at offset %d: %v", e.Offset, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// UnsupportedTypeError is a value type this package cannot read (Redis
// 7.2's) or does not know.
type UnsupportedTypeError struct{ Type byte }

func (e *UnsupportedTypeError) Error() string {
	return fmt.Sprintf("unsupported RDB value type %d (%s)", e.Type, TypeName(e.Type))
}

// ModuleValueError is a key whose value belongs to a module type: redshard
// has no modules to load it.
type ModuleValueError struct {
	ID   uint64
	Name string // the 9-character module type name the ID carries
}

func (e *ModuleValueError) Error() string {
	return fmt.Sprintf("value of module type '%s' (module id %d, encoding version %d): modules are not supported", e.Name, e.ID, e.ID&1023)
}

// Errors of malformed input, wrapped in an *Error.
var (
	ErrChecksum   = errors.New("wrong RDB checksum")
	ErrMagic      = errors.New("wrong signature: not an RDB file")
	ErrVersion    = errors.New("can't handle RDB format version")
	ErrEmptyValue = errors.New("empty collection")
	ErrDuplicate  = errors.New("duplicate member or field")
	ErrNaNScore   = errors.New("sorted set with a NaN score")
	ErrBadBlob    = errors.New("corrupt ziplist, listpack, intset or zipmap")
	ErrBadOpcode  = errors.New("unknown opcode")
)

// moduleTypeName decodes the name in a module id: 9 characters of 6 bits
// from the top 54 bits; the low 10 are the encoding version.
func moduleTypeName(id uint64) string {
	const cset = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	var name [9]byte
	id >>= 10
	for j := 8; j >= 0; j-- {
		name[j] = cset[id&63]
		id >>= 6
	}
	return string(name[:])
}
