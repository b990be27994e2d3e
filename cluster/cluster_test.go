package cluster

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A nodes.conf as Redis 7.0 writes it for a three-master cluster with a
// replica, a hostname, a slot being migrated and one being imported.
const sampleConf = `e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:30001@40001,host-a myself,master - 0 1700000000000 1 connected 0-5460 [5461->-67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1] [10923-<-292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f]
67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 127.0.0.1:30002@40002 master - 0 1700000000001 2 connected 5461-10922
292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 127.0.0.1:30003@40003 master - 0 1700000000002 3 connected 10923-16383
6ec23923021cf3ffec47632106199cb7f496ce01 127.0.0.1:30004@40004 slave e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1700000000003 1 connected
vars currentEpoch 6 lastVoteEpoch 0
`

func TestParseMarshalRoundTrip(t *testing.T) {
	st, warns, err := Parse([]byte(sampleConf))
	if err != nil || len(warns) != 0 {
		t.Fatalf("Parse: %v %v", err, warns)
	}
	if st.Myself == nil || st.Myself.Name != "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca" || st.Myself.Hostname != "host-a" {
		t.Fatalf("myself %+v", st.Myself)
	}
	if len(st.Nodes) != 4 || st.CurrentEpoch != 6 || st.Size() != 3 {
		t.Fatalf("nodes %d epoch %d size %d", len(st.Nodes), st.CurrentEpoch, st.Size())
	}
	if o := st.Owner(5461); o == nil || o.Port != 30002 || o.CPort != 40002 {
		t.Fatalf("owner of 5461: %+v", o)
	}
	if st.Migrating[5461] != "67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1" || st.Importing[10923] != "292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f" {
		t.Fatalf("open slots %v %v", st.Migrating, st.Importing)
	}
	r := st.Lookup("6ec23923021cf3ffec47632106199cb7f496ce01")
	if r == nil || r.Flags != FlagSlave || r.Master != st.Myself.Name || r.ConfigEpoch != 0 {
		t.Fatalf("replica %+v", r)
	}
	// The replica shows its master's epoch, as Redis's nodes.conf does.
	// Links are down until the bus connects them, as in Redis after a load.
	want := strings.ReplaceAll(sampleConf, "connected 5461", "disconnected 5461")
	want = strings.ReplaceAll(want, "connected 10923", "disconnected 10923")
	want = strings.ReplaceAll(want, "1 connected\nvars", "1 disconnected\nvars")
	if got := string(st.Marshal()); got != want {
		t.Fatalf("Marshal:\n%s\nwant:\n%s", got, want)
	}
	if !st.OK(true) {
		t.Fatal("a fully covered cluster is not ok")
	}
}

func TestParseErrors(t *testing.T) {
	for _, bad := range []string{
		"vars currentEpoch\n",
		"abc 127.0.0.1:1@2 myself,master - 0 0 0 connected\n",                               // short id
		"e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1 myself - 0 0 0 c\n",             // no port
		"e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:1@2 master - 0 0 0 connected\n", // no myself
		"e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca :1@2 myself,master - 0 0 0 connected 16384\n",
		"e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca :1@2 myself,bogus - 0 0 0 connected\n",
	} {
		if _, _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
	st, warns, err := Parse([]byte("e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca :6379 myself,master - 0 0 0 connected\nvars currentEpoch 1 foo 2 lastVoteEpoch 3\n"))
	if err != nil || len(warns) != 1 || st.CurrentEpoch != 1 || st.LastVoteEpoch != 3 || st.Myself.CPort != 16379 {
		t.Fatalf("%v %v %+v", err, warns, st)
	}
}

func TestNewNodeAndSlots(t *testing.T) {
	st := New()
	if !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(st.Myself.Name) || New().Myself.Name == st.Myself.Name {
		t.Fatalf("name %q", st.Myself.Name)
	}
	if st.OK(true) || st.OK(false) {
		t.Fatal("a node without slots is ok")
	}
	me := st.Myself
	me.Port, me.CPort = 7000, 17000
	for _, s := range []int{0, 1, 2, 5, 7, 8, 16383} {
		me.Slots.Add(s)
	}
	if got := st.Describe(me, false); got != me.Name+" :7000@17000 myself,master - 0 0 0 connected 0-2 5 7-8 16383" {
		t.Fatalf("Describe: %q", got)
	}
	if st.OK(true) || !st.OK(false) {
		t.Fatal("partial coverage")
	}
	for s := 0; s < Slots; s++ {
		me.Slots.Add(s)
	}
	if !me.Slots.All() || me.Slots.Count() != Slots || len(me.Slots.Ranges()) != 1 || !st.OK(true) {
		t.Fatal("all slots")
	}
	if !st.BumpEpoch() || me.ConfigEpoch != 1 || st.CurrentEpoch != 1 || st.BumpEpoch() {
		t.Fatalf("BumpEpoch: %d %d", me.ConfigEpoch, st.CurrentEpoch)
	}
	old := me.Name
	st.Reset(false)
	if me.Slots.Count() != 0 || me.Name != old || me.ConfigEpoch != 1 {
		t.Fatal("soft reset")
	}
	st.Reset(true)
	if me.Name == old || me.ConfigEpoch != 0 || st.CurrentEpoch != 0 {
		t.Fatal("hard reset")
	}
}

func TestSaveLoadLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nodes.conf")
	f, err := Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Lock(path); err == nil || !strings.Contains(err.Error(), "is already used by a different Redis Cluster node") {
		t.Fatalf("second lock: %v", err)
	}
	if st, _, err := Load(path); st != nil || err != nil {
		t.Fatalf("empty file: %v %v", st, err)
	}
	st, _, _ := Parse([]byte(sampleConf))
	if err := Save(path, st.Marshal(), true); err != nil {
		t.Fatal(err)
	}
	// A shorter content over a longer file: padded, then truncated.
	st.Nodes = st.Nodes[:1]
	st.Migrating, st.Importing = map[int]string{}, map[int]string{}
	if err := Save(path, st.Marshal(), false); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if string(data) != string(st.Marshal()) {
		t.Fatalf("file %q", data)
	}
	st2, _, err := Load(path)
	if err != nil || st2.Myself.Name != st.Myself.Name || !st2.Myself.Slots.Has(0) || st2.Myself.Slots.Has(5461) {
		t.Fatalf("Load: %v %+v", err, st2)
	}
	f.Close()
	if f2, err := Lock(path); err != nil {
		t.Fatalf("lock after close: %v", err)
	} else {
		f2.Close()
	}
}

func TestFlagsString(t *testing.T) {
	if s := (FlagMyself | FlagMaster | FlagNoFailover).String(); s != "myself,master,nofailover" {
		t.Fatal(s)
	}
	if s := Flags(0).String(); s != "noflags" {
		t.Fatal(s)
	}
}
