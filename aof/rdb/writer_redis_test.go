package rdb

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// writeFixture writes the data set (and the library) with a Writer.
func writeFixture(t testing.TB, opts Options, keys []fixtureKey) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, opts, Header{CTime: time.Now().Unix(), UsedMem: 1234567})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Function(fixtureLibrary); err != nil {
		t.Fatal(err)
	}
	byDB := map[int][]fixtureKey{}
	var dbs []int
	for _, k := range keys {
		if _, ok := byDB[k.db]; !ok {
			dbs = append(dbs, k.db)
		}
		byDB[k.db] = append(byDB[k.db], k)
	}
	for _, db := range dbs {
		expires := 0
		for _, k := range byDB[db] {
			if k.expireMS >= 0 {
				expires++
			}
		}
		if err := w.SelectDB(db, uint64(len(byDB[db])), uint64(expires)); err != nil {
			t.Fatal(err)
		}
		for _, k := range byDB[db] {
			if err := w.Key([]byte(k.key), k.expireMS, &k.v); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestWriterRoundTrip(t *testing.T) {
	for _, opts := range []Options{DefaultOptions(), func() Options {
		o := DefaultOptions()
		o.Compress, o.Checksum = false, false
		return o
	}()} {
		b := writeFixture(t, opts, fixtureKeys())
		for _, stream := range []bool{false, true} {
			fc := collect(t, b, stream)
			checkContents(t, fc, fixtureKeys(), true)
			if fc.summary.Checked != opts.Checksum || fc.aux["redis-ver"] != "7.0.15" || fc.aux["aof-base"] != "0" {
				t.Errorf("summary %+v aux %q", fc.summary, fc.aux)
			}
			if len(fc.functions) != 1 || fc.functions[0] != fixtureLibrary {
				t.Errorf("functions %q", fc.functions)
			}
		}
		if !opts.Checksum && !bytes.HasSuffix(b, make([]byte, 8)) {
			t.Error("rdbchecksum no: the CRC is not 0")
		}
	}
}

// TestWriterRedisServer: a file from Writer passes redis-check-rdb and
// loads into redis-server 7.0 with the same data, encodings and library;
// with rdbcompression and rdbchecksum on and off.
func TestWriterRedisServer(t *testing.T) {
	check, err := exec.LookPath("redis-check-rdb")
	if err != nil {
		t.Skip("redis-check-rdb not on PATH")
	}
	for _, compress := range []bool{true, false} {
		t.Run(fmt.Sprint("compress=", compress), func(t *testing.T) {
			opts := DefaultOptions()
			opts.Compress, opts.Checksum = compress, compress
			dir := t.TempDir()
			file := filepath.Join(dir, "mine.rdb")
			if err := os.WriteFile(file, writeFixture(t, opts, fixtureKeys()), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(check, file).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "RDB looks OK") {
				t.Fatalf("redis-check-rdb: %v\n%s", err, out)
			}
			c := startRedis(t, dir, "--dbfilename", "mine.rdb")
			checkServer(t, c, fixtureKeys())
			if r := c.do("FCALL", "fixture_echo", "0", "hi"); r != "hi" {
				t.Errorf("FCALL after load: %v", r)
			}
			// Redis's own dump of what it loaded reads back the same.
			c.ok("SAVE")
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			checkContents(t, collect(t, b, false), fixtureKeys(), true)
		})
	}
}

// TestDumpRedisServer: DUMP payloads of redis-server decode to the data
// set; EncodeDump's payloads RESTORE into it; and for the encodings whose
// order is fixed (all but hash tables), EncodeDump is byte-equal to DUMP
// without rdbcompression (this package's LZF finds other matches than
// Redis's lzf, so compressed bytes differ, both valid).
func TestDumpRedisServer(t *testing.T) {
	for _, compress := range []bool{true, false} {
		t.Run(fmt.Sprint("compress=", compress), func(t *testing.T) {
			yn := map[bool]string{true: "yes", false: "no"}[compress]
			c := startRedis(t, t.TempDir(), "--rdbcompression", yn)
			keys := fixtureKeys()
			c.fill(keys)
			opts := DefaultOptions()
			opts.Compress = compress
			for _, k := range keys {
				c.ok("SELECT", strconv.Itoa(k.db))
				payload, ok := c.do("DUMP", k.key).(string)
				if !ok {
					t.Fatalf("DUMP %q: %v", k.key, payload)
				}
				v, err := DecodeDump([]byte(payload))
				if err != nil {
					t.Fatalf("DecodeDump(DUMP %q): %v", k.key, err)
				}
				if !valuesEqual(v, k.v) || v.Type != k.typ {
					t.Errorf("DUMP %q decodes to %s %s, want %s %s", k.key, TypeName(v.Type), describe(v), TypeName(k.typ), describe(k.v))
				}
				mine, err := EncodeDump(&k.v, opts)
				if err != nil {
					t.Fatal(err)
				}
				if k.typ != TypeSet && k.typ != TypeHash && mine[0] == TypeSet {
					t.Errorf("%q: EncodeDump chose %s", k.key, TypeName(mine[0]))
				}
				if !compress && k.typ != TypeSet && k.typ != TypeHash && !bytes.Equal(mine, []byte(payload)) {
					t.Errorf("%q: EncodeDump differs from DUMP:\nmine  %.200x\nredis %.200x", k.key, mine, payload)
				}
				if r := c.do("RESTORE", "restored:"+k.key, "0", string(mine)); r != "+OK" {
					t.Fatalf("RESTORE of EncodeDump(%q): %v", k.key, r)
				}
				got, _, enc := c.fetch("restored:" + k.key)
				if !valuesEqual(got, k.v) {
					t.Errorf("RESTORE %q: %s, want %s", k.key, describe(got), describe(k.v))
				}
				if w := wantEncoding(k.typ); w != "" && enc != w {
					t.Errorf("RESTORE %q: encoding %s, want %s", k.key, enc, w)
				}
			}
			// A corrupted payload is refused by both.
			p, _ := EncodeDump(&keys[0].v, opts)
			p[0] ^= 0x40
			if _, err := DecodeDump(p); err != ErrDumpPayload {
				t.Errorf("DecodeDump of a bad CRC: %v", err)
			}
			if r := c.do("RESTORE", "bad", "0", string(p)); r != "-"+ErrDumpPayload.Error() {
				t.Errorf("RESTORE of a bad CRC: %v", r)
			}
		})
	}
}

// TestOldEncodingsRedisServer: the hand-built file of pre-7.0 encodings
// (oldFile) is what redis-server 7.0 reads too: it loads with the data the
// reader tests expect, which checks this package's test encoders of
// ziplists, zipmaps and text scores against Redis's loader.
func TestOldEncodingsRedisServer(t *testing.T) {
	dir := t.TempDir()
	// redis-check-rdb calls an empty key an error; the server skips it.
	noEmpty, _ := oldFileSized(9, 20000, false)
	if err := os.WriteFile(filepath.Join(dir, "old.rdb"), noEmpty, 0o644); err != nil {
		t.Fatal(err)
	}
	if check, err := exec.LookPath("redis-check-rdb"); err == nil {
		if out, err := exec.Command(check, filepath.Join(dir, "old.rdb")).CombinedOutput(); err != nil || !strings.Contains(string(out), "RDB looks OK") {
			t.Fatalf("redis-check-rdb: %v\n%s", err, out)
		}
	}
	b, want := oldFile(9)
	if err := os.WriteFile(filepath.Join(dir, "old.rdb"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	c := startRedis(t, dir, "--dbfilename", "old.rdb")
	checkServer(t, c, want)
}
