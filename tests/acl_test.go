package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A user restricted to ~app:* +@read +@write works on its keys, gets
// Redis's -NOPERM texts elsewhere, and each denial is in ACL LOG.
func TestACLRestrictedUserGetsNoPerm(t *testing.T) {
	for _, shards := range []string{"1", "4"} {
		t.Run("shards="+shards, func(t *testing.T) {
			s := startServer(t, "--shards", shards)
			admin := s.client(t, 2)
			ctx := ctxT(t)
			if err := admin.Do(ctx, "ACL", "SETUSER", "app", "on", ">pw", "~app:*", "+@read", "+@write").Err(); err != nil {
				t.Fatal(err)
			}
			u := s.clientWith(t, func(o *redis.Options) { o.Username, o.Password = "app", "pw" })
			for i, k := range []string{"app:1", "app:2", "app:{x}3", "app:4"} {
				if err := u.Set(ctx, k, i, 0).Err(); err != nil {
					t.Fatalf("SET %s: %v", k, err)
				}
			}
			if v, err := u.Get(ctx, "app:2").Result(); err != nil || v != "1" {
				t.Fatalf("GET app:2: %q %v", v, err)
			}
			runSteps(t, u, []step{
				cmd("SET", "other", "x").is(errReply("NOPERM this user has no permissions to access one of the keys used as arguments")),
				cmd("MGET", "app:1", "other").is(errReply("NOPERM this user has no permissions to access one of the keys used as arguments")),
				cmd("CONFIG", "GET", "maxmemory").is(errReply("NOPERM this user has no permissions to run the 'config|get' command")),
				cmd("CLIENT", "LIST").is(errReply("NOPERM this user has no permissions to run the 'client|list' command")),
				cmd("PUBLISH", "ch", "m").is(errReply("NOPERM this user has no permissions to run the 'publish' command")),
				cmd("ACL", "WHOAMI").is(errReply("NOPERM this user has no permissions to run the 'acl|whoami' command")),
			})
			log, err := admin.Do(ctx, "ACL", "LOG").Slice()
			if err != nil {
				t.Fatal(err)
			}
			if len(log) != 5 {
				t.Fatalf("ACL LOG has %d entries, want 5 (SET and MGET of 'other' are one): %v", len(log), log)
			}
			first := entryMap(t, log[0])
			if first["reason"] != "command" || first["object"] != "acl|whoami" || first["username"] != "app" || first["context"] != "toplevel" {
				t.Errorf("newest entry %v", first)
			}
			key := entryMap(t, log[4])
			if key["reason"] != "key" || key["object"] != "other" || key["count"] != int64(2) {
				t.Errorf("key entry %v", key)
			}
			if ci, _ := key["client-info"].(string); !strings.Contains(ci, " user=app ") {
				t.Errorf("client-info %q", ci)
			}
			if err := u.Do(ctx, "AUTH", "app", "wrong").Err(); err == nil || err.Error() != "WRONGPASS invalid username-password pair or user is disabled." {
				t.Errorf("AUTH with a wrong password: %v", err)
			}
		})
	}
}

func entryMap(t *testing.T, e any) map[string]any {
	t.Helper()
	switch m := e.(type) {
	case map[any]any:
		out := map[string]any{}
		for k, v := range m {
			out[k.(string)] = v
		}
		return out
	case []any:
		out := map[string]any{}
		for i := 0; i+1 < len(m); i += 2 {
			out[m[i].(string)] = m[i+1]
		}
		return out
	}
	t.Fatalf("ACL LOG entry %T", e)
	return nil
}

// Deleting a user closes its connections, wherever their loops are; other
// connections stay.
func TestACLDelUserDisconnectsItsClients(t *testing.T) {
	s := startServer(t, "--shards", "4")
	ctx := ctxT(t)
	admin := s.client(t, 2)
	if err := admin.Do(ctx, "ACL", "SETUSER", "gone", "on", "nopass", "~*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	var conns []*rawConn
	for i := 0; i < 4; i++ {
		rc := s.raw(t)
		rc.do(resp("AUTH", "gone", "x"), "+OK\r\n")
		conns = append(conns, rc)
	}
	other := s.raw(t)
	if n, err := admin.Do(ctx, "ACL", "DELUSER", "gone").Int(); err != nil || n != 1 {
		t.Fatalf("DELUSER: %d %v", n, err)
	}
	for _, rc := range conns {
		rc.expectClosed()
	}
	other.do(resp("PING"), "+PONG\r\n")
	if n, err := admin.Do(ctx, "CLIENT", "KILL", "USER", "gone").Result(); err == nil {
		t.Errorf("CLIENT KILL USER of a deleted user: %v", n)
	}
}

// ACL SAVE writes the users to the aclfile and ACL LOAD reads them back,
// closing the connections of the users it replaces.
func TestACLFileSaveLoadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "users.acl")
	if err := os.WriteFile(file, []byte("user default on nopass ~* &* +@all\nuser alice on >a ~a:* +get\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServerIn(t, dir, "--aclfile", file)
	ctx := ctxT(t)
	c := s.client(t, 2)
	list, err := c.Do(ctx, "ACL", "LIST").StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"user alice on #ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb ~a:* resetchannels -@all +get",
		"user default on nopass ~* &* +@all",
	}
	if strings.Join(list, "\n") != strings.Join(want, "\n") {
		t.Fatalf("ACL LIST\n%s\nwant\n%s", strings.Join(list, "\n"), strings.Join(want, "\n"))
	}
	if err := c.Do(ctx, "ACL", "SETUSER", "bob", "on", ">b", "(+set %W~w*)").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, "ACL", "SAVE").Err(); err != nil {
		t.Fatal(err)
	}
	saved, _ := os.ReadFile(file)
	if !strings.Contains(string(saved), "user bob on #") || !strings.Contains(string(saved), " (%W~w* resetchannels -@all +set)\n") {
		t.Fatalf("saved file:\n%s", saved)
	}
	alice := s.raw(t)
	alice.do(resp("AUTH", "alice", "a"), "+OK\r\n")
	if err := c.Do(ctx, "ACL", "DELUSER", "bob").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, "ACL", "LOAD").Err(); err != nil {
		t.Fatal(err)
	}
	alice.expectClosed()
	after, _ := c.Do(ctx, "ACL", "LIST").StringSlice()
	if len(after) != 3 || !strings.HasPrefix(after[1], "user bob on #") {
		t.Fatalf("after LOAD: %q", after)
	}
	// A bad file changes nothing.
	if err := os.WriteFile(file, []byte("user x on +nosuch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = c.Do(ctx, "ACL", "LOAD").Err()
	if err == nil || !strings.Contains(err.Error(), "Error in applying operation '+nosuch'") {
		t.Fatalf("LOAD of a bad file: %v", err)
	}
	if n, _ := c.Do(ctx, "ACL", "USERS").StringSlice(); len(n) != 3 {
		t.Errorf("users after a failed LOAD: %q", n)
	}
}

// user directives and aclfile together are Redis's fatal error.
func TestACLUserLinesAndACLFileAreExclusive(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "r.conf")
	os.WriteFile(filepath.Join(dir, "u.acl"), nil, 0o644)
	os.WriteFile(conf, []byte("aclfile "+filepath.Join(dir, "u.acl")+"\nuser bob on nopass +@all\n"), 0o644)
	s, err := tryStart(t, dir, []string{configFileArg(conf)})
	if err == nil {
		s.stop()
		t.Fatal("the server started")
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(s.log.String(), "please define either an ACL file or declare users directly in your redis.conf, but not both.") {
		if time.Now().After(deadline) {
			t.Fatalf("log:\n%s", s.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// An AUTH flood with wrong passwords, from many connections at once, is
// answered WRONGPASS each time and counted in ACL LOG, while another
// client's commands keep being served without waiting behind it.
func TestACLAuthFloodDoesNotSlowOthers(t *testing.T) {
	ctx := context.Background()
	s := startServer(t, "--shards", "2")
	if err := s.client(t, 2).ConfigSet(ctx, "requirepass", "secret").Err(); err != nil {
		t.Fatal(err)
	}
	good := s.clientWith(t, func(o *redis.Options) { o.Password = "secret" })
	if err := good.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	base := time.Now()
	for i := 0; i < 200; i++ {
		if err := good.Ping(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	}
	quiet := time.Since(base) / 200

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var attempts atomic.Int64
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rc := s.raw(t)
			for {
				select {
				case <-stop:
					return
				default:
				}
				rc.write(resp("AUTH", "default", "wrong"))
				if line := rc.line(); !strings.HasPrefix(line, "-WRONGPASS") {
					t.Errorf("AUTH with a wrong password: %q", line)
					return
				}
				attempts.Add(1)
			}
		}()
	}
	time.Sleep(100 * time.Millisecond)
	base = time.Now()
	for i := 0; i < 200; i++ {
		if err := good.Ping(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	}
	flooded := time.Since(base) / 200
	close(stop)
	wg.Wait()
	t.Logf("PING %v quiet, %v during %d failed AUTHs", quiet, flooded, attempts.Load())
	if attempts.Load() < 1000 {
		t.Errorf("only %d failed AUTHs answered", attempts.Load())
	}
	// Other clients are served between the flood's commands: a PING does
	// not wait for the flood (a loop held by it would cost milliseconds).
	if flooded > 20*time.Millisecond {
		t.Errorf("a PING took %v on average during the AUTH flood (%v before)", flooded, quiet)
	}
	entries, err := good.Do(ctx, "ACL", "LOG", "1").Slice()
	if err != nil || len(entries) != 1 {
		t.Fatalf("ACL LOG 1: %v %v", entries, err)
	}
	e := fmt.Sprint(entries[0])
	if !strings.Contains(e, "auth") || !strings.Contains(e, "default") {
		t.Errorf("ACL LOG entry of the flood: %s", e)
	}
}
