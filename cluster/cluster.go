// Package cluster holds the parts of Redis Cluster that need no server: the
// node id, the slot map, the nodes.conf file (Redis 7.0's format, which is
// also CLUSTER NODES' text) and its lock. It imports nothing of redshard's;
// the server (server/cmd_cluster.go) owns one State and serves the CLUSTER
// command and the command path's slot checks from it.
//
// # The model today: one node
//
// A State knows its own node (myself) and, read from a nodes.conf, any
// others. A node that starts without a nodes.conf owns every slot (a
// redshard choice: cluster clients work with no `redis-cli --cluster
// create`); ADDSLOTS, DELSLOTS, FLUSHSLOTS, SETSLOT NODE <myself>, RESET
// change what it owns, as in Redis, and every change is saved.
//
// # The model later: several nodes
//
// The slot map is already per node (Node.Slots, State.Owner), migrating and
// importing slots are kept and written as Redis writes them ("[slot->-id]",
// "[slot-<-id]"), and epochs are kept, so the cluster bus can be added
// without changing this package's shape: see the top of
// server/cmd_cluster.go for the plan.
package cluster

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Slots is the number of hash slots (CLUSTER_SLOTS).
const Slots = 16384

// NameLen is the length of a node id (CLUSTER_NAMELEN).
const NameLen = 40

// PortIncr is the bus port's offset from the client port (CLUSTER_PORT_INCR).
const PortIncr = 10000

// Flags are a node's flags (CLUSTER_NODE_*).
type Flags uint16

const (
	FlagMaster Flags = 1 << iota
	FlagSlave
	FlagPFail
	FlagFail
	FlagMyself
	FlagHandshake
	FlagNoAddr
	FlagMeet
	FlagMigrateTo
	FlagNoFailover
)

// flagNames is Redis's redisNodeFlagsTable, in its order (the order of
// the flags in CLUSTER NODES).
var flagNames = []struct {
	f    Flags
	name string
}{
	{FlagMyself, "myself"},
	{FlagMaster, "master"},
	{FlagSlave, "slave"},
	{FlagPFail, "fail?"},
	{FlagFail, "fail"},
	{FlagHandshake, "handshake"},
	{FlagNoAddr, "noaddr"},
	{FlagNoFailover, "nofailover"},
}

// String is the comma-separated flags ("noflags" for none).
func (f Flags) String() string {
	var b strings.Builder
	for _, fn := range flagNames {
		if f&fn.f != 0 {
			if b.Len() > 0 {
				b.WriteByte(',')
			}
			b.WriteString(fn.name)
		}
	}
	if b.Len() == 0 {
		return "noflags"
	}
	return b.String()
}

// SlotSet is a set of slots.
type SlotSet [Slots / 64]uint64

func (s *SlotSet) Has(slot int) bool { return s[slot>>6]&(1<<(uint(slot)&63)) != 0 }
func (s *SlotSet) Add(slot int)      { s[slot>>6] |= 1 << (uint(slot) & 63) }
func (s *SlotSet) Del(slot int)      { s[slot>>6] &^= 1 << (uint(slot) & 63) }

// Count is the number of slots in the set.
func (s *SlotSet) Count() int {
	n := 0
	for _, w := range s {
		for ; w != 0; w &= w - 1 {
			n++
		}
	}
	return n
}

// All reports whether every slot is in the set.
func (s *SlotSet) All() bool {
	for _, w := range s {
		if w != ^uint64(0) {
			return false
		}
	}
	return true
}

// Ranges returns the set as ascending [start, end] ranges.
func (s *SlotSet) Ranges() [][2]int {
	var r [][2]int
	start := -1
	for i := 0; i <= Slots; i++ {
		in := i < Slots && s.Has(i)
		if in && start < 0 {
			start = i
		} else if !in && start >= 0 {
			r = append(r, [2]int{start, i - 1})
			start = -1
		}
	}
	return r
}

// Node is one node of the cluster as this node knows it.
type Node struct {
	Name     string // 40 hex characters
	IP       string // "" until learned (Redis learns its own from MEET)
	Port     int    // client port (the TLS port in a TLS cluster)
	PPort    int    // plaintext port in a TLS cluster (not in nodes.conf)
	CPort    int    // bus port
	Hostname string
	Flags    Flags
	Master   string // the master's id for a replica, "" for a master

	PingSent, PongReceived int64 // ms; written as given (Redis writes its clocks)
	ConfigEpoch            uint64
	Connected              bool // its link is up (myself is always connected)
	Slots                  SlotSet
}

// IsMaster reports the master flag.
func (n *Node) IsMaster() bool { return n.Flags&FlagMaster != 0 }

// State is the cluster configuration of this node: what nodes.conf holds.
type State struct {
	Myself        *Node
	Nodes         []*Node // in file order; Myself among them
	CurrentEpoch  uint64
	LastVoteEpoch uint64
	// Open slots of myself: the node id a slot migrates to, or is
	// imported from.
	Migrating map[int]string
	Importing map[int]string
}

// New returns the state of a fresh node: a random id, master, no slots.
func New() *State {
	me := &Node{Name: NewName(), Flags: FlagMyself | FlagMaster, Connected: true}
	return &State{Myself: me, Nodes: []*Node{me}, Migrating: map[int]string{}, Importing: map[int]string{}}
}

// NewName returns a random node id: 40 lower-case hex characters.
func NewName() string {
	var b [NameLen / 2]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("cluster: no randomness: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

// ValidName is Redis's verifyClusterNodeId: 40 characters (any).
func ValidName(s string) bool { return len(s) == NameLen }

// Lookup returns the node with the given id, or nil.
func (st *State) Lookup(name string) *Node {
	for _, n := range st.Nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// Owner returns the node that serves slot, or nil.
func (st *State) Owner(slot int) *Node {
	for _, n := range st.Nodes {
		if n.Slots.Has(slot) {
			return n
		}
	}
	return nil
}

// MaxEpoch is clusterGetMaxEpoch: the greatest config epoch known, or the
// current epoch if greater.
func (st *State) MaxEpoch() uint64 {
	m := st.CurrentEpoch
	for _, n := range st.Nodes {
		if n.ConfigEpoch > m {
			m = n.ConfigEpoch
		}
	}
	return m
}

// BumpEpoch is clusterBumpConfigEpochWithoutConsensus: it reports whether
// myself got a new config epoch.
func (st *State) BumpEpoch() bool {
	if me := st.Myself; me.ConfigEpoch == 0 || me.ConfigEpoch != st.MaxEpoch() {
		st.CurrentEpoch++
		me.ConfigEpoch = st.CurrentEpoch
		return true
	}
	return false
}

// Size is the number of masters serving at least one slot (cluster_size).
func (st *State) Size() int {
	n := 0
	for _, nd := range st.Nodes {
		if nd.IsMaster() && nd.Slots.Count() > 0 {
			n++
		}
	}
	return n
}

// OK is clusterUpdateState's verdict, without the rejoin delays (a node
// that knows no other has nobody to rejoin): every slot served by a node
// not failed (when fullCoverage), and a majority of the masters that serve
// slots reachable.
func (st *State) OK(fullCoverage bool) bool {
	if fullCoverage {
		var all SlotSet
		for _, n := range st.Nodes {
			if n.Flags&FlagFail != 0 {
				continue
			}
			for i := range all {
				all[i] |= n.Slots[i]
			}
		}
		if !all.All() {
			return false
		}
	}
	size, reachable := 0, 0
	for _, n := range st.Nodes {
		if n.IsMaster() && n.Slots.Count() > 0 {
			size++
			if n.Flags&(FlagFail|FlagPFail) == 0 {
				reachable++
			}
		}
	}
	return reachable >= size/2+1
}

// Reset is clusterReset for a master: every slot unassigned, open slots
// closed, other nodes forgotten; hard also zeroes the epochs and takes a
// new id.
func (st *State) Reset(hard bool) {
	st.Migrating = map[int]string{}
	st.Importing = map[int]string{}
	me := st.Myself
	me.Slots = SlotSet{}
	st.Nodes = []*Node{me}
	if hard {
		st.CurrentEpoch, st.LastVoteEpoch, me.ConfigEpoch = 0, 0, 0
		me.Name = NewName()
	}
}

// Describe is clusterGenNodeDescription: the node's line of CLUSTER NODES
// and of nodes.conf, without the newline. usePPort shows the plaintext
// port (a TLS cluster, a plaintext client).
func (st *State) Describe(n *Node, usePPort bool) string {
	port := n.Port
	if usePPort && n.PPort != 0 {
		port = n.PPort
	}
	var b strings.Builder
	b.WriteString(n.Name)
	b.WriteByte(' ')
	b.WriteString(n.IP)
	b.WriteByte(':')
	b.WriteString(strconv.Itoa(port))
	b.WriteByte('@')
	b.WriteString(strconv.Itoa(n.CPort))
	if n.Hostname != "" {
		b.WriteByte(',')
		b.WriteString(n.Hostname)
	}
	b.WriteByte(' ')
	b.WriteString(n.Flags.String())
	b.WriteByte(' ')
	if n.Master != "" {
		b.WriteString(n.Master)
	} else {
		b.WriteByte('-')
	}
	epoch := n.ConfigEpoch
	if n.Flags&FlagSlave != 0 && n.Master != "" {
		if m := st.Lookup(n.Master); m != nil {
			epoch = m.ConfigEpoch
		}
	}
	link := "disconnected"
	if n.Connected || n.Flags&FlagMyself != 0 {
		link = "connected"
	}
	fmt.Fprintf(&b, " %d %d %d %s", n.PingSent, n.PongReceived, epoch, link)
	for _, r := range n.Slots.Ranges() {
		if r[0] == r[1] {
			fmt.Fprintf(&b, " %d", r[0])
		} else {
			fmt.Fprintf(&b, " %d-%d", r[0], r[1])
		}
	}
	if n == st.Myself {
		for slot := 0; slot < Slots; slot++ {
			if to, ok := st.Migrating[slot]; ok {
				fmt.Fprintf(&b, " [%d->-%s]", slot, to)
			} else if from, ok := st.Importing[slot]; ok {
				fmt.Fprintf(&b, " [%d-<-%s]", slot, from)
			}
		}
	}
	return b.String()
}

// NodesText is clusterGenNodesDescription with no filter: every node's
// line, each ending in a newline (CLUSTER NODES).
func (st *State) NodesText(usePPort bool) string {
	var b strings.Builder
	for _, n := range st.Nodes {
		b.WriteString(st.Describe(n, usePPort))
		b.WriteByte('\n')
	}
	return b.String()
}

// Marshal is the content clusterSaveConfig writes: the nodes (those in
// handshake left out) and the vars line.
func (st *State) Marshal() []byte {
	var b strings.Builder
	for _, n := range st.Nodes {
		if n.Flags&FlagHandshake != 0 {
			continue
		}
		b.WriteString(st.Describe(n, false))
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "vars currentEpoch %d lastVoteEpoch %d\n", st.CurrentEpoch, st.LastVoteEpoch)
	return []byte(b.String())
}

// ErrCorrupt is what Parse returns for a file Redis would refuse
// ("Unrecoverable error: corrupted cluster config file.").
var ErrCorrupt = errors.New("Unrecoverable error: corrupted cluster config file.")

// Parse is clusterLoadConfig's reading of a nodes.conf. Unknown vars are
// returned as warnings, as Redis logs them ("Skipping unknown cluster
// config variable"). ping_sent and pong_received are kept as read.
func Parse(data []byte) (st *State, warnings []string, err error) {
	st = &State{Migrating: map[int]string{}, Importing: map[int]string{}}
	node := func(name string) *Node {
		if n := st.Lookup(name); n != nil {
			return n
		}
		n := &Node{Name: name}
		st.Nodes = append(st.Nodes, n)
		return n
	}
	for _, line := range strings.Split(string(data), "\n") {
		argv := strings.Fields(line)
		if len(argv) == 0 {
			continue
		}
		if strings.EqualFold(argv[0], "vars") {
			if len(argv)%2 == 0 {
				return nil, nil, ErrCorrupt
			}
			for j := 1; j < len(argv); j += 2 {
				v, _ := strconv.ParseUint(argv[j+1], 10, 64)
				switch strings.ToLower(argv[j]) {
				case "currentepoch":
					st.CurrentEpoch = v
				case "lastvoteepoch":
					st.LastVoteEpoch = v
				default:
					warnings = append(warnings, fmt.Sprintf("Skipping unknown cluster config variable '%s'", argv[j]))
				}
			}
			continue
		}
		if len(argv) < 8 || !ValidName(argv[0]) {
			return nil, nil, ErrCorrupt
		}
		n := node(argv[0])
		addr := argv[1]
		n.Hostname = ""
		if i := strings.IndexByte(addr, ','); i >= 0 {
			addr, n.Hostname = addr[:i], addr[i+1:]
		}
		i := strings.LastIndexByte(addr, ':')
		if i < 0 {
			return nil, nil, ErrCorrupt
		}
		n.IP = addr[:i]
		port, bus, hasBus := strings.Cut(addr[i+1:], "@")
		n.Port = atoi(port)
		if hasBus {
			n.CPort = atoi(bus)
		} else {
			n.CPort = n.Port + PortIncr
		}
		for _, f := range strings.Split(argv[2], ",") {
			switch strings.ToLower(f) {
			case "myself":
				if st.Myself != nil {
					return nil, nil, ErrCorrupt
				}
				st.Myself = n
				n.Flags |= FlagMyself
				n.Connected = true
			case "master":
				n.Flags |= FlagMaster
			case "slave":
				n.Flags |= FlagSlave
			case "fail?":
				n.Flags |= FlagPFail
			case "fail":
				n.Flags |= FlagFail
			case "handshake":
				n.Flags |= FlagHandshake
			case "noaddr":
				n.Flags |= FlagNoAddr
			case "nofailover":
				n.Flags |= FlagNoFailover
			case "noflags":
			default:
				// Redis panics: "Unknown flag in redis cluster config file".
				return nil, nil, fmt.Errorf("Unknown flag in redis cluster config file")
			}
		}
		if argv[3][0] != '-' {
			if !ValidName(argv[3]) {
				return nil, nil, ErrCorrupt
			}
			node(argv[3])
			n.Master = argv[3]
		}
		n.PingSent, _ = strconv.ParseInt(argv[4], 10, 64)
		n.PongReceived, _ = strconv.ParseInt(argv[5], 10, 64)
		if n.Flags&FlagSlave != 0 && n.Master != "" {
			n.ConfigEpoch = 0
		} else {
			n.ConfigEpoch, _ = strconv.ParseUint(argv[6], 10, 64)
		}
		for _, a := range argv[8:] {
			if a[0] == '[' {
				// [slot->-id] migrating, [slot-<-id] importing
				p := strings.IndexByte(a, '-')
				if p < 0 || p+3 > len(a) {
					return nil, nil, ErrCorrupt
				}
				slot := atoi(a[1:p])
				dir := a[p+1]
				rest := a[p+3:]
				end := strings.IndexByte(rest, ']')
				if slot < 0 || slot >= Slots || end != NameLen {
					return nil, nil, ErrCorrupt
				}
				id := rest[:end]
				node(id)
				if dir == '>' {
					st.Migrating[slot] = id
				} else {
					st.Importing[slot] = id
				}
				continue
			}
			lo, hi, isRange := strings.Cut(a, "-")
			start := atoi(lo)
			stop := start
			if isRange {
				stop = atoi(hi)
			}
			if start < 0 || start >= Slots || stop < 0 || stop >= Slots {
				return nil, nil, ErrCorrupt
			}
			for s := start; s <= stop; s++ {
				// clusterAddSlot: a slot already served is left alone.
				if st.Owner(s) == nil {
					n.Slots.Add(s)
				}
			}
		}
	}
	if st.Myself == nil {
		return nil, nil, ErrCorrupt
	}
	if m := st.MaxEpoch(); m > st.CurrentEpoch {
		st.CurrentEpoch = m
	}
	return st, warnings, nil
}

// atoi is C's atoi: leading digits (with a sign), 0 for none.
func atoi(s string) int {
	i, neg, v := 0, false, 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		v = v*10 + int(s[i]-'0')
		if v > 1<<31 {
			break
		}
	}
	if neg {
		return -v
	}
	return v
}

// Lock takes the file's lock as clusterLockConfig does (flock, exclusive,
// not waiting), creating the file if needed. The returned file holds the
// lock for as long as it stays open.
func Lock(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("Can't open %s in order to acquire a lock: %s", path, errText(err))
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("Sorry, the cluster configuration file %s is already used by a different Redis Cluster node. Please make sure that different nodes use different cluster configuration files.", path)
		}
		return nil, fmt.Errorf("Impossible to lock %s: %s", path, errText(err))
	}
	return f, nil
}

// Load reads the file: (nil, nil) when it is missing or empty (a new node
// writes its configuration then).
func Load(path string) (*State, []string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, nil
		}
		return nil, nil, fmt.Errorf("Loading the cluster node config from %s: %s", path, errText(err))
	}
	if len(data) == 0 {
		return nil, nil, nil
	}
	return Parse(data)
}

// Save is clusterSaveConfig: the content is written over the file in place
// in one write (the lock is on this inode, so no rename), padded with
// newlines to the old length and then truncated, so that a crash leaves
// either the old or the new lines (blank lines are skipped on load).
func Save(path string, content []byte, fsync bool) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	buf := content
	if fi.Size() > int64(len(content)) {
		buf = make([]byte, fi.Size())
		copy(buf, content)
		for i := len(content); i < len(buf); i++ {
			buf[i] = '\n'
		}
	}
	if _, err := f.WriteAt(buf, 0); err != nil {
		return err
	}
	if fsync {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	if len(buf) != len(content) {
		_ = f.Truncate(int64(len(content))) // not critical, as in Redis
	}
	return nil
}

// errText is strerror's text for an OS error.
func errText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	var en syscall.Errno
	if errors.As(err, &en) {
		s := en.Error()
		if s != "" {
			return strings.ToUpper(s[:1]) + s[1:]
		}
	}
	return err.Error()
}
