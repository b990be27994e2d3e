package tests

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	rsserver "github.com/redshard/redshard/server"
)

// The documented config file starts the real server, and every name the
// server's CONFIG GET * reports (aliases included) is in it. (The defaults
// it states are checked option by option in server/redshardconf_test.go.)
func TestRedshardConfStartsAndNamesEveryOption(t *testing.T) {
	path, err := filepath.Abs(filepath.Join("..", "cmd", "redshard-server", "redshard.conf"))
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	words := map[string]bool{}
	for _, w := range regexp.MustCompile(`[A-Za-z0-9_-]+`).FindAllString(string(text), -1) {
		words[w] = true
	}
	// The file says supervised auto: a NOTIFY_SOCKET of whatever runs the
	// tests must not hear from this server.
	t.Setenv("NOTIFY_SOCKET", "")
	// startServer puts its own port, bind, dir, save and appendonly after
	// the file, as a command line would.
	s := startServer(t, configFileArg(path))
	c := s.client(t, 2)
	m, err := c.ConfigGet(ctxT(t), "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(m) < 150 {
		t.Fatalf("CONFIG GET * returned only %d options", len(m))
	}
	for name := range m {
		if !words[name] {
			t.Errorf("CONFIG GET * reports %q, which redshard.conf does not name", name)
		}
	}
	// The file's own choices hold where the command line left them alone.
	for name, want := range map[string]string{"supervised": "auto", "protected-mode": "yes", "appendfsync": "everysec"} {
		if m[name] != want {
			t.Errorf("%s = %q, want %q from redshard.conf", name, m[name], want)
		}
	}
}

// notifyListener is systemd's end of sd_notify: a unix datagram socket of
// the test's own, named by NOTIFY_SOCKET for the servers it starts.
type notifyListener struct {
	t    *testing.T
	conn *net.UnixConn
}

func listenNotify(t *testing.T) *notifyListener {
	t.Helper()
	path := filepath.Join(t.TempDir(), "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	t.Setenv("NOTIFY_SOCKET", path)
	return &notifyListener{t: t, conn: conn}
}

// until reads datagrams until one is want, and returns every message
// read, want last; it fails the test after d.
func (n *notifyListener) until(want string, d time.Duration) []string {
	n.t.Helper()
	var got []string
	buf := make([]byte, 4096)
	deadline := time.Now().Add(d)
	for {
		_ = n.conn.SetReadDeadline(deadline)
		k, err := n.conn.Read(buf)
		if err != nil {
			n.t.Fatalf("no %q from the server (read: %v); got %q", want, err, got)
		}
		msg := strings.TrimSuffix(string(buf[:k]), "\n")
		got = append(got, msg)
		if msg == want {
			return got
		}
	}
}

// silent checks that nothing arrives for d.
func (n *notifyListener) silent(d time.Duration) {
	n.t.Helper()
	_ = n.conn.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, 4096)
	if k, err := n.conn.Read(buf); err == nil {
		n.t.Fatalf("unexpected notification %q", buf[:k])
	}
}

func indexOf(list []string, prefix string) int {
	for i, s := range list {
		if strings.HasPrefix(s, prefix) {
			return i
		}
	}
	return -1
}

// supervised systemd speaks sd_notify as redis-server does: STATUS lines
// while the AOF loads, READY=1 only once the data set is there, STOPPING=1
// when a shutdown begins. supervised auto does it when NOTIFY_SOCKET is
// set; supervised no never does.
func TestSystemdNotify(t *testing.T) {
	dir := t.TempDir()
	first := startServerIn(t, dir, "--appendonly", "yes")
	c := first.client(t, 2)
	if err := c.Set(ctxT(t), "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	first.stop()

	n := listenNotify(t)
	s := startServerIn(t, dir, "--appendonly", "yes", "--supervised", "systemd")
	msgs := n.until("READY=1", 10*time.Second)
	loading := indexOf(msgs, "STATUS=Loading the append only file")
	ready := indexOf(msgs, "STATUS=Ready to accept connections")
	if loading < 0 || ready != len(msgs)-2 || loading > ready {
		t.Fatalf("want STATUS=Loading..., then STATUS=Ready to accept connections, then READY=1; got %q", msgs)
	}
	if got := s.client(t, 2).Get(ctxT(t), "k").Val(); got != "v" {
		t.Fatalf("after READY=1, GET k = %q, want the loaded value", got)
	}
	if !strings.Contains(s.log.String(), "Supervised by systemd") {
		t.Errorf("the log does not say the server is supervised:\n%s", s.log.String())
	}
	s.stop()
	if msgs := n.until("STOPPING=1", 10*time.Second); len(msgs) != 1 {
		t.Errorf("before STOPPING=1: %q", msgs[:len(msgs)-1])
	}

	auto := startServer(t, "--supervised", "auto")
	n.until("READY=1", 10*time.Second)
	auto.stop()
	n.until("STOPPING=1", 10*time.Second)

	startServer(t, "--supervised", "no")
	n.silent(500 * time.Millisecond)
}

// make install puts the server, redshard.conf and the systemd unit under a
// PREFIX, the unit naming the installed binary and config; the unit passes
// systemd-analyze verify where systemd-analyze exists, and its LimitNOFILE
// leaves room for the config's maxclients.
func TestMakeInstallAndUnit(t *testing.T) {
	makeBin, err := exec.LookPath("make")
	if err != nil {
		t.Skip("make is not installed")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	prefix := t.TempDir()
	cmd := exec.Command(makeBin, "-C", "..", "install", "PREFIX="+prefix, "GO="+goBin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	bin := filepath.Join(prefix, "bin", "redshard-server")
	conf := filepath.Join(prefix, "etc", "redshard", "redshard.conf")
	unit := filepath.Join(prefix, "lib", "systemd", "system", "redshard.service")
	for _, p := range []string{bin, filepath.Join(prefix, "bin", "redshard-check-aof"), conf, unit} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("make install did not install %s: %v", p, err)
		}
	}
	if out, err := exec.Command(bin, "--version").Output(); err != nil || !strings.HasPrefix(string(out), "redshard server v=") {
		t.Fatalf("installed binary: %v %q", err, out)
	}
	text, err := os.ReadFile(unit)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	for _, line := range strings.Split(string(text), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			keys[k] = v
		}
	}
	if want := bin + " " + conf + " --supervised systemd --daemonize no"; keys["ExecStart"] != want {
		t.Errorf("ExecStart=%s, want %s", keys["ExecStart"], want)
	}
	for k, want := range map[string]string{"Type": "notify", "ProtectSystem": "strict", "NoNewPrivileges": "yes",
		"ReadWritePaths": "/var/lib/redshard", "StateDirectory": "redshard"} {
		if keys[k] != want {
			t.Errorf("%s=%s, want %s", k, keys[k], want)
		}
	}
	cfg, err := rsserver.LoadConfigFrom([]string{conf}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Dir() != keys["ReadWritePaths"] {
		t.Errorf("redshard.conf's dir %s is not the unit's writable path %s", cfg.Dir(), keys["ReadWritePaths"])
	}
	if want := strconv.FormatInt(cfg.MaxClients()+32, 10); keys["LimitNOFILE"] != want {
		t.Errorf("LimitNOFILE=%s, want maxclients+32 = %s", keys["LimitNOFILE"], want)
	}
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze is not installed: unit not verified")
		return
	}
	// verify warns (and still exits 0) about unknown keys: it must say
	// nothing at all.
	out, err := exec.Command(analyze, "verify", unit).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) != 0 {
		t.Errorf("systemd-analyze verify %s: %v\n%s", unit, err, out)
	}
}

// avg_ttl in INFO keyspace is Redis's estimate from the active expiry
// cycle's samples, combined over the shards; used_cpu_*_main_thread are
// reported, within the process's figures.
func TestInfoAvgTTLAndMainThreadCPU(t *testing.T) {
	s := startServer(t, "--shards", "2", "--hz", "50")
	c := s.client(t, 2)
	ctx := ctxT(t)
	p := c.Pipeline()
	for i := 0; i < 2000; i++ {
		p.Set(ctx, "k"+strconv.Itoa(i), "v", 100*time.Second)
		p.Set(ctx, "p"+strconv.Itoa(i), "v", 0)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	// Both shards' estimates start at their first sample's mean (~100 s)
	// and stay there; one that has not sampled yet would pull the
	// combined figure down, so wait until it settles.
	var f map[string]string
	re := regexp.MustCompile(`^keys=4000,expires=2000,avg_ttl=(\d+)$`)
	deadline := time.Now().Add(5 * time.Second)
	for {
		f = infoFields(c.Info(ctx, "keyspace").Val())
		m := re.FindStringSubmatch(f["db0"])
		if m == nil {
			t.Fatalf("db0 = %q", f["db0"])
		}
		ttl, _ := strconv.Atoi(m[1])
		if ttl >= 90000 && ttl <= 100000 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("avg_ttl = %d ms, want about 100000 (keys set with EX 100)", ttl)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := c.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if f = infoFields(c.Info(ctx, "keyspace").Val()); f["db0"] != "" {
		t.Fatalf("after FLUSHALL db0 = %q", f["db0"])
	}

	f = infoFields(c.Info(ctx, "cpu").Val())
	for _, pair := range [][2]string{{"used_cpu_sys_main_thread", "used_cpu_sys"}, {"used_cpu_user_main_thread", "used_cpu_user"}} {
		main, err1 := strconv.ParseFloat(f[pair[0]], 64)
		all, err2 := strconv.ParseFloat(f[pair[1]], 64)
		if err1 != nil || err2 != nil || main < 0 || main > all {
			t.Errorf("%s = %q, %s = %q: want 0 <= main thread <= process", pair[0], f[pair[0]], pair[1], f[pair[1]])
		}
	}
	u, _ := strconv.ParseFloat(f["used_cpu_user_main_thread"], 64)
	if sy, _ := strconv.ParseFloat(f["used_cpu_sys_main_thread"], 64); u+sy == 0 {
		t.Errorf("used_cpu_*_main_thread are 0 after 4000 writes")
	}
}
