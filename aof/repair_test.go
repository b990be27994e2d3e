package aof

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeGroups writes n groups of one batch each (batch i: SET k<i> v<i>,
// and a second command in db 1 for odd i) and returns the folder's options,
// the incr file's bytes and, for each group, the commands it holds.
func writeGroups(t *testing.T, n int) (Options, []byte, [][]string) {
	t.Helper()
	dir := t.TempDir()
	o := testOptions(dir, FsyncAlways)
	l := mustOpen(t, o)
	if _, err := l.Load(func([][]byte) error { return nil }); err != nil {
		t.Fatal(err)
	}
	p := l.NewProducer()
	var groups [][]string
	for i := 0; i < n; i++ {
		g := []string{fmt.Sprintf("0:SET k%d v%d", i, i)}
		p.Append(0, args("SET", fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i)))
		if i%2 == 1 {
			p.Append(1, args("RPUSH", "list", fmt.Sprint(i)))
			g = append(g, fmt.Sprintf("1:RPUSH list %d", i))
		}
		seq := p.Submit()
		waitFor(t, "durable", func() bool { return l.Durable() >= seq })
		groups = append(groups, g)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(incrPath(dir, 1))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(groupStarts(t, data)); got != n {
		t.Fatalf("%d groups in the file, want %d", got, n)
	}
	return o, data, groups
}

// copyFolder copies the folder of o to a new temp dir with the incr file
// replaced by incr, and returns the new options.
func copyFolder(t *testing.T, o Options, incr []byte) Options {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, o.DirName), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"appendonly.aof.manifest", "appendonly.aof.1.base.aof"} {
		b, err := os.ReadFile(filepath.Join(o.Dir, o.DirName, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, o.DirName, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(incrPath(dir, 1), incr, 0o644); err != nil {
		t.Fatal(err)
	}
	n := o
	n.Dir = dir
	return n
}

func flatten(groups [][]string) []string {
	var out []string
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// TestFileCutAtEveryOffsetOfItsLastGroup: whatever byte the file ends at
// inside its last group, Load with aof-load-truncated yields exactly the
// whole groups before it and cuts the file back to them; without it, Load
// fails naming the file, the offset and the repair command.
func TestFileCutAtEveryOffsetOfItsLastGroup(t *testing.T) {
	o, data, groups := writeGroups(t, 4)
	starts := groupStarts(t, data)
	last := starts[len(starts)-1]
	want := flatten(groups[:len(groups)-1])
	for cut := last + 1; cut < len(data); cut++ {
		t.Run(fmt.Sprintf("cut at %d", cut), func(t *testing.T) {
			c := copyFolder(t, o, data[:cut])
			c.LoadTruncated = false
			_, _, err := loadAll(t, c)
			var le *LoadError
			if !errors.As(err, &le) || !le.Torn || le.File != "appendonly.aof.1.incr.aof" || le.Offset != int64(last) {
				t.Fatalf("without aof-load-truncated: err = %v, want a torn-tail LoadError at offset %d", err, last)
			}
			for _, s := range []string{"appendonly.aof.1.incr.aof", fmt.Sprintf("offset %d", last), "redshard-check-aof --fix " + manifestPath(c.Dir), "aof-load-truncated"} {
				if !strings.Contains(err.Error(), s) {
					t.Fatalf("error %q does not mention %q", err, s)
				}
			}

			c.LoadTruncated = true
			got, st, err := loadAll(t, c)
			if err != nil {
				t.Fatal(err)
			}
			if g := withDB(got); !slices.Equal(g, want) {
				t.Fatalf("loaded %q, want %q", g, want)
			}
			if !st.Truncated || st.TruncatedAt != int64(last) || st.DroppedBytes != int64(cut-last) {
				t.Fatalf("stats %+v, want cut at %d dropping %d bytes", st, last, cut-last)
			}
			if fi, err := os.Stat(incrPath(c.Dir, 1)); err != nil || fi.Size() != int64(last) {
				t.Fatalf("file not cut back to %d: %v %v", last, fi.Size(), err)
			}
		})
	}
	t.Run("cut exactly at the group boundary", func(t *testing.T) {
		c := copyFolder(t, o, data[:last])
		c.LoadTruncated = false
		got, st, err := loadAll(t, c)
		if err != nil || st.Truncated || !slices.Equal(withDB(got), want) {
			t.Fatalf("err=%v stats=%+v got=%q", err, st, got)
		}
	})
}

// TestCorruptionBeforeTheTailStopsTheLoad: a byte changed anywhere in a
// group followed by whole groups is corruption, even with
// aof-load-truncated: Load fails with the file, the group's offset and the
// repair command, and leaves the file alone.
func TestCorruptionBeforeTheTailStopsTheLoad(t *testing.T) {
	o, data, _ := writeGroups(t, 4)
	starts := groupStarts(t, data)
	g, end := starts[1], starts[2] // the second group
	for pos := g; pos < end; pos++ {
		t.Run(fmt.Sprintf("byte %d", pos), func(t *testing.T) {
			bad := slices.Clone(data)
			bad[pos] ^= 0x20
			if bad[pos] == data[pos] {
				t.Skip()
			}
			c := copyFolder(t, o, bad)
			_, _, err := loadAll(t, c)
			var le *LoadError
			if !errors.As(err, &le) || le.Torn {
				t.Fatalf("err = %v, want corruption", err)
			}
			if le.Offset < int64(g) || le.Offset >= int64(end) {
				t.Fatalf("reported offset %d, outside the damaged group [%d,%d)", le.Offset, g, end)
			}
			for _, s := range []string{"appendonly.aof.1.incr.aof", fmt.Sprintf("offset %d", le.Offset), "redshard-check-aof --fix " + manifestPath(c.Dir)} {
				if !strings.Contains(err.Error(), s) {
					t.Fatalf("error %q does not mention %q", err, s)
				}
			}
			if now, _ := os.ReadFile(incrPath(c.Dir, 1)); !bytes.Equal(now, bad) {
				t.Fatalf("Load changed a corrupt file")
			}
		})
	}
}

// TestDamagedLastGroupIsATornTail: garbage or zeros in the last group (an
// unsynced tail after a power loss) are cut like a short file.
func TestDamagedLastGroupIsATornTail(t *testing.T) {
	o, data, groups := writeGroups(t, 3)
	starts := groupStarts(t, data)
	last := starts[len(starts)-1]
	tests := []struct {
		name string
		tail func([]byte) []byte
	}{
		{"flipped payload byte", func(b []byte) []byte { b[len(b)-3] ^= 1; return b }},
		{"zeroed group", func(b []byte) []byte { clear(b[last:]); return b }},
		{"zeros appended", func(b []byte) []byte { return append(b, make([]byte, 4096)...) }},
		{"half a header", func(b []byte) []byte { return append(b, "#B:12"...) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bad := tc.tail(slices.Clone(data))
			c := copyFolder(t, o, bad)
			got, st, err := loadAll(t, c)
			if err != nil {
				t.Fatal(err)
			}
			want := flatten(groups)
			if tc.name != "zeros appended" && tc.name != "half a header" {
				want = flatten(groups[:2])
			}
			if !slices.Equal(withDB(got), want) || !st.Truncated {
				t.Fatalf("got %q (stats %+v), want %q", got, st, want)
			}
		})
	}
}

// TestRedisTruncationRuleForFilesWithoutAnnotations: a file written by
// redis-server follows Redis's loader: a command cut by the end of the file
// is dropped, an open MULTI is reverted, and a bad byte before the end is
// fatal.
func TestRedisTruncationRuleForFilesWithoutAnnotations(t *testing.T) {
	set := func(k string) string { return string(appendCommand(nil, args("SET", k, "v"))) }
	multi := string(appendCommand(nil, args("MULTI")))
	sel := string(appendSelect(nil, 0))
	whole := sel + set("a") + "#TS:1700000000\r\n" + set("b")
	tests := []struct {
		name      string
		file      string
		want      []string
		truncated int // new size, -1: not truncated
		corrupt   bool
	}{
		{"whole file", whole, []string{"SELECT 0", "SET a v", "SET b v"}, -1, false},
		{"cut inside the last command", whole + set("c")[:9], []string{"SELECT 0", "SET a v", "SET b v"}, len(whole), false},
		{"cut inside a bulk length", whole + "*3\r\n$3\r\nSET\r\n$1", []string{"SELECT 0", "SET a v", "SET b v"}, len(whole), false},
		{"open MULTI is reverted", whole + multi + set("c"), []string{"SELECT 0", "SET a v", "SET b v"}, len(whole), false},
		{"bad byte before the end", sel + set("a") + "x" + set("b"), nil, -1, true},
		{"bad bulk terminator", sel + strings.Replace(set("a"), "v\r\n", "vXY", 1) + set("b"), nil, -1, true},
	}
	o, _, _ := writeGroups(t, 1)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := copyFolder(t, o, []byte(tc.file))
			got, st, err := loadAll(t, c)
			if tc.corrupt {
				var le *LoadError
				if !errors.As(err, &le) || le.Torn {
					t.Fatalf("err = %v, want corruption", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			if tc.truncated >= 0 && (!st.Truncated || st.TruncatedAt != int64(tc.truncated)) {
				t.Fatalf("stats %+v, want cut at %d", st, tc.truncated)
			}
			if tc.truncated < 0 && st.Truncated {
				t.Fatalf("whole file was cut: %+v", st)
			}
		})
	}
}

// TestTornFileThatIsNotTheLastIsFatal: only the last file may be cut.
func TestTornFileThatIsNotTheLastIsFatal(t *testing.T) {
	o, data, _ := writeGroups(t, 2)
	c := copyFolder(t, o, data[:len(data)-2])
	// A second incr file after the torn one.
	if err := os.WriteFile(incrPath(c.Dir, 2), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	m := "file appendonly.aof.1.base.aof seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\nfile appendonly.aof.2.incr.aof seq 2 type i\n"
	if err := os.WriteFile(manifestPath(c.Dir), []byte(m), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := loadAll(t, c)
	var le *LoadError
	if !errors.As(err, &le) || !le.NotLast || !strings.Contains(err.Error(), "not the last file") {
		t.Fatalf("err = %v, want a not-the-last-file error", err)
	}
}

// TestCheckFixRepairsATornTail: the checker finds the torn tail, --fix cuts
// it back to the last whole group, and then the folder checks clean here
// and in redis-check-aof.
func TestCheckFixRepairsATornTail(t *testing.T) {
	o, data, groups := writeGroups(t, 3)
	starts := groupStarts(t, data)
	last := starts[len(starts)-1]
	c := copyFolder(t, o, data[:len(data)-5])
	var out bytes.Buffer
	ok, err := Check(manifestPath(c.Dir), false, &out)
	if ok || err != nil || !strings.Contains(out.String(), "Use the --fix option") {
		t.Fatalf("check without fix: ok=%v err=%v\n%s", ok, err, out.String())
	}
	out.Reset()
	ok, err = Check(manifestPath(c.Dir), true, &out)
	if !ok || err != nil || !strings.Contains(out.String(), "Successfully truncated AOF appendonly.aof.1.incr.aof") {
		t.Fatalf("check --fix: ok=%v err=%v\n%s", ok, err, out.String())
	}
	if fi, _ := os.Stat(incrPath(c.Dir, 1)); fi.Size() != int64(last) {
		t.Fatalf("fixed size %d, want %d", fi.Size(), last)
	}
	out.Reset()
	if ok, err := Check(manifestPath(c.Dir), false, &out); !ok || err != nil {
		t.Fatalf("check after fix: ok=%v err=%v\n%s", ok, err, out.String())
	}
	c.LoadTruncated = false
	got, _, err := loadAll(t, c)
	if err != nil || !slices.Equal(withDB(got), flatten(groups[:2])) {
		t.Fatalf("after fix: err=%v got=%q", err, got)
	}
	if bin, err := exec.LookPath("redis-check-aof"); err == nil {
		if b, err := exec.Command(bin, manifestPath(c.Dir)).CombinedOutput(); err != nil {
			t.Fatalf("redis-check-aof after fix: %v\n%s", err, b)
		}
	}
}

// TestCheckFixSavesWhatItCutsAfterCorruption: cutting at a corrupt group
// that whole groups follow saves the cut bytes beside the file.
func TestCheckFixSavesWhatItCutsAfterCorruption(t *testing.T) {
	o, data, _ := writeGroups(t, 3)
	starts := groupStarts(t, data)
	bad := slices.Clone(data)
	bad[starts[1]+len("#B:")+2] ^= 1
	c := copyFolder(t, o, bad)
	var out bytes.Buffer
	ok, err := Check(manifestPath(c.Dir), true, &out)
	if !ok || err != nil {
		t.Fatalf("ok=%v err=%v\n%s", ok, err, out.String())
	}
	saved, err := os.ReadFile(fmt.Sprintf("%s.corrupt-%d", incrPath(c.Dir, 1), starts[1]))
	if err != nil || !bytes.Equal(saved, bad[starts[1]:]) {
		t.Fatalf("saved tail: %v (%d bytes)\n%s", err, len(saved), out.String())
	}
}

// TestCheckAcceptsASingleFile: the tool also takes a file instead of a
// manifest, as redis-check-aof does.
func TestCheckAcceptsASingleFile(t *testing.T) {
	_, data, _ := writeGroups(t, 2)
	path := filepath.Join(t.TempDir(), "appendonly.aof")
	if err := os.WriteFile(path, data[:len(data)-1], 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if ok, _ := Check(path, false, &out); ok {
		t.Fatalf("torn single file passed:\n%s", out.String())
	}
	if ok, err := Check(path, true, &out); !ok || err != nil {
		t.Fatalf("fix: %v %v\n%s", ok, err, out.String())
	}
}

// TestCommandsRedisAppendedAfterOurGroupsFollowRedisRules: in a file where
// redis-server appended bare commands after redshard's groups, a bad byte
// among them is corruption (as Redis says), and a cut command is a torn
// tail.
func TestCommandsRedisAppendedAfterOurGroupsFollowRedisRules(t *testing.T) {
	o, data, groups := writeGroups(t, 2)
	set := func(k string) []byte { return appendCommand(nil, args("SET", k, "v")) }
	plain := append(slices.Clone(data), set("r1")...)
	tests := []struct {
		name    string
		file    []byte
		want    []string
		corrupt bool
	}{
		{"whole", append(slices.Clone(plain), set("r2")...), append(flatten(groups), "1:SET r1 v", "1:SET r2 v"), false},
		{"cut command", append(slices.Clone(plain), set("r2")[:10]...), append(flatten(groups), "1:SET r1 v"), false},
		{"bad byte between commands", append(append(slices.Clone(plain), 'x'), set("r2")...), nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := copyFolder(t, o, tc.file)
			got, _, err := loadAll(t, c)
			if tc.corrupt {
				var le *LoadError
				if !errors.As(err, &le) || le.Torn {
					t.Fatalf("err = %v, want corruption", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if g := withDB(got); !slices.Equal(g, tc.want) {
				t.Fatalf("got %q, want %q", g, tc.want)
			}
		})
	}
}

// TestTimestampAnnotationsInATornTail: with aof-timestamp-enabled a "#TS:"
// line stands in front of a group's own annotation. A file cut anywhere
// from that line on loads the whole groups before it, and the load cuts
// the file back to no further than the last whole group's end.
func TestTimestampAnnotationsInATornTail(t *testing.T) {
	o, data, groups := writeGroups(t, 3)
	starts := groupStarts(t, data)
	last := starts[len(starts)-1]
	ts := appendTimestamp(nil, 1796150000)
	withTS := append(append(append([]byte(nil), data[:last]...), ts...), data[last:]...)
	want := flatten(groups[:len(groups)-1])
	for cut := last; cut < len(withTS); cut++ {
		c := copyFolder(t, o, withTS[:cut])
		c.LoadTruncated = true
		got, _, err := loadAll(t, c)
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		if g := withDB(got); !slices.Equal(g, want) {
			t.Fatalf("cut at %d: loaded %q, want %q", cut, g, want)
		}
		if fi, err := os.Stat(incrPath(c.Dir, 1)); err != nil || fi.Size() < int64(last) || fi.Size() > int64(last+len(ts)) {
			t.Fatalf("cut at %d: file is %d bytes after the load, want %d..%d", cut, fi.Size(), last, last+len(ts))
		}
	}
	// Whole, it loads every group.
	c := copyFolder(t, o, withTS)
	got, _, err := loadAll(t, c)
	if err != nil || !slices.Equal(withDB(got), flatten(groups)) {
		t.Fatalf("whole file: err=%v loaded %q", err, got)
	}
}
