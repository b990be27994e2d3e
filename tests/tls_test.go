package tests

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// pki is a CA with a server and a client certificate, written as PEM files
// in a test's directory, plus a second server certificate (for reloads)
// and a client certificate from another CA (to be refused).
type pki struct {
	dir                       string
	ca, srvCert, srvKey       string
	srv2Cert, srv2Key         string
	cliCert, cliKey           string
	strangerCert, strangerKey string
	caPool                    *x509.CertPool
	client, stranger          tls.Certificate
}

func newPKI(t testing.TB) *pki {
	t.Helper()
	dir := t.TempDir()
	p := &pki{dir: dir}
	caKey, caCert, caDER := makeCA(t, "redshard test CA")
	p.ca = writePEM(t, dir, "ca.crt", "CERTIFICATE", caDER)
	p.caPool = x509.NewCertPool()
	p.caPool.AddCert(caCert)
	p.srvCert, p.srvKey = makeLeaf(t, dir, "server", "redshard-one", caCert, caKey, true)
	p.srv2Cert, p.srv2Key = makeLeaf(t, dir, "server2", "redshard-two", caCert, caKey, true)
	p.cliCert, p.cliKey = makeLeaf(t, dir, "client", "client", caCert, caKey, false)
	otherKey, otherCert, _ := makeCA(t, "some other CA")
	p.strangerCert, p.strangerKey = makeLeaf(t, dir, "stranger", "stranger", otherCert, otherKey, false)
	var err error
	if p.client, err = tls.LoadX509KeyPair(p.cliCert, p.cliKey); err != nil {
		t.Fatal(err)
	}
	if p.stranger, err = tls.LoadX509KeyPair(p.strangerCert, p.strangerKey); err != nil {
		t.Fatal(err)
	}
	return p
}

var serial int64 = 1

func makeCA(t testing.TB, cn string) (*ecdsa.PrivateKey, *x509.Certificate, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial++
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(serial),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return key, cert, der
}

func makeLeaf(t testing.TB, dir, name, cn string, ca *x509.Certificate, caKey *ecdsa.PrivateKey, server bool) (string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
		tmpl.DNSNames = []string{"localhost"}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return writePEM(t, dir, name+".crt", "CERTIFICATE", der), writePEM(t, dir, name+".key", "EC PRIVATE KEY", kder)
}

func writePEM(t testing.TB, dir, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func (p *pki) serverArgs() []string {
	return []string{"--tls-cert-file", p.srvCert, "--tls-key-file", p.srvKey, "--tls-ca-cert-file", p.ca}
}

// clientConfig is a TLS client configuration that trusts the CA, with
// cert as the client certificate (nil: none).
func (p *pki) clientConfig(cert *tls.Certificate) *tls.Config {
	c := &tls.Config{RootCAs: p.caPool, ServerName: "127.0.0.1"}
	if cert != nil {
		// Sent whatever CAs the server names (Go's client would keep back
		// a certificate from a CA the server doesn't list; OpenSSL's
		// clients send theirs).
		c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
	}
	return c
}

// startTLSServer starts redshard with a plaintext port and a tls-port.
func startTLSServer(t *testing.T, p *pki, extra ...string) (*server, string) {
	t.Helper()
	tlsPort := freePort(t)
	args := append(p.serverArgs(), "--tls-port", strconv.Itoa(tlsPort))
	s := startServer(t, append(args, extra...)...)
	return s, net.JoinHostPort("127.0.0.1", strconv.Itoa(tlsPort))
}

func tlsRedis(t *testing.T, addr string, cfg *tls.Config) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, TLSConfig: cfg, Protocol: 2, DisableIdentity: true,
		MaxRetries: -1, DialTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// tlsRaw is a TLS connection for exact bytes.
func tlsRaw(t *testing.T, addr string, cfg *tls.Config) (*tls.Conn, *bufio.Reader) {
	t.Helper()
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		t.Fatalf("tls dial %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c, bufio.NewReader(c)
}

// TestTLSMutualGoRedis: go-redis with a client certificate is served on
// the TLS port across shards, pipelined replies come in order, and CLIENT
// INFO shows the client's own TCP address.
func TestTLSMutualGoRedis(t *testing.T) {
	p := newPKI(t)
	_, addr := startTLSServer(t, p, "--shards", "2")
	c := tlsRedis(t, addr, p.clientConfig(&p.client))
	ctx := ctxT(t)
	if err := c.Set(ctx, "greeting", "hello over tls", 0).Err(); err != nil {
		t.Fatalf("SET: %v", err)
	}
	if v, err := c.Get(ctx, "greeting").Result(); err != nil || v != "hello over tls" {
		t.Fatalf("GET = %q, %v; want \"hello over tls\"", v, err)
	}
	// One pipeline over keys of both shards: replies in command order.
	pipe := c.Pipeline()
	keys := spreadKeys("tlsk", 2, 8)
	var incrs []*redis.IntCmd
	for i := 0; i < 400; i++ {
		incrs = append(incrs, pipe.Incr(ctx, keys[i%len(keys)]))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatalf("pipeline: %v", err)
	}
	for i, r := range incrs {
		if want := int64(i/len(keys) + 1); r.Val() != want {
			t.Fatalf("INCR #%d = %d, want %d", i, r.Val(), want)
		}
	}
	// A large value crosses several TLS records each way.
	big := strings.Repeat("x", 200<<10)
	if err := c.Set(ctx, "big", big, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if v, _ := c.Get(ctx, "big").Result(); v != big {
		t.Fatalf("GET big: %d bytes, want %d", len(v), len(big))
	}

	conn, r := tlsRaw(t, addr, p.clientConfig(&p.client))
	fmt.Fprint(conn, resp("CLIENT", "INFO"))
	hdr, _ := r.ReadString('\n')
	n, _ := strconv.Atoi(strings.TrimSpace(hdr[1:]))
	body := make([]byte, n+2)
	if _, err := io.ReadFull(r, body); err != nil {
		t.Fatal(err)
	}
	if want := "addr=" + conn.LocalAddr().String() + " laddr=" + addr + " "; !strings.Contains(string(body), want) {
		t.Fatalf("CLIENT INFO = %q, want it to contain %q", body, want)
	}
}

func tlsPing(addr string, cfg *tls.Config) error {
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte(resp("PING"))); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("PING = %q", line)
	}
	return nil
}

// TestTLSAuthClients: tls-auth-clients yes (the default) refuses a client
// without a certificate; optional and no let it in; a certificate from
// another CA is refused unless no.
func TestTLSAuthClients(t *testing.T) {
	p := newPKI(t)
	s, addr := startTLSServer(t, p)
	admin := s.client(t, 2)
	ctx := ctxT(t)
	if v := admin.ConfigGet(ctx, "tls-auth-clients").Val()["tls-auth-clients"]; v != "yes" {
		t.Fatalf("tls-auth-clients default = %q, want yes", v)
	}
	for _, tc := range []struct {
		mode                    string
		noCert, stranger, valid bool // allowed?
	}{
		{"yes", false, false, true},
		{"optional", true, false, true},
		{"no", true, true, true},
	} {
		if err := admin.ConfigSet(ctx, "tls-auth-clients", tc.mode).Err(); err != nil {
			t.Fatalf("CONFIG SET tls-auth-clients %s: %v", tc.mode, err)
		}
		for _, c := range []struct {
			what string
			cert *tls.Certificate
			ok   bool
		}{{"no certificate", nil, tc.noCert}, {"another CA's certificate", &p.stranger, tc.stranger}, {"the CA's certificate", &p.client, tc.valid}} {
			err := tlsPing(addr, p.clientConfig(c.cert))
			if c.ok && err != nil {
				t.Errorf("tls-auth-clients %s, %s: refused (%v), want served", tc.mode, c.what, err)
			}
			if !c.ok && err == nil {
				t.Errorf("tls-auth-clients %s, %s: served, want refused", tc.mode, c.what)
			}
		}
	}
}

// TestTLSConfigSetReloadsCertificate: CONFIG SET tls-cert-file and
// tls-key-file take effect for new connections without a restart, the
// open ones go on; a file that can't be loaded fails the CONFIG SET with
// Redis's error and keeps the certificate in use.
func TestTLSConfigSetReloadsCertificate(t *testing.T) {
	p := newPKI(t)
	s, addr := startTLSServer(t, p)
	admin := s.client(t, 2)
	ctx := ctxT(t)
	peerCN := func() string {
		c, err := tls.Dial("tcp", addr, p.clientConfig(&p.client))
		if err != nil {
			t.Fatalf("tls dial: %v", err)
		}
		defer c.Close()
		return c.ConnectionState().PeerCertificates[0].Subject.CommonName
	}
	if cn := peerCN(); cn != "redshard-one" {
		t.Fatalf("server certificate CN = %q, want redshard-one", cn)
	}
	old, r := tlsRaw(t, addr, p.clientConfig(&p.client))
	if err := admin.ConfigSet(ctx, "tls-cert-file", p.srv2Cert).Err(); err == nil {
		// the new certificate with the old key: refused, nothing changes
		t.Fatalf("CONFIG SET tls-cert-file with a key that doesn't match: accepted")
	}
	if err := admin.Do(ctx, "CONFIG", "SET", "tls-cert-file", p.srv2Cert, "tls-key-file", p.srv2Key).Err(); err != nil {
		t.Fatalf("CONFIG SET tls-cert-file tls-key-file: %v", err)
	}
	if cn := peerCN(); cn != "redshard-two" {
		t.Fatalf("after CONFIG SET, new connection's certificate CN = %q, want redshard-two", cn)
	}
	if v := admin.ConfigGet(ctx, "tls-cert-file").Val()["tls-cert-file"]; v != p.srv2Cert {
		t.Fatalf("CONFIG GET tls-cert-file = %q, want %q", v, p.srv2Cert)
	}
	fmt.Fprint(old, resp("PING"))
	if line, err := r.ReadString('\n'); err != nil || line != "+PONG\r\n" {
		t.Fatalf("connection opened before the reload: PING = %q, %v", line, err)
	}

	err := admin.ConfigSet(ctx, "tls-cert-file", filepath.Join(p.dir, "missing.crt")).Err()
	want := "ERR CONFIG SET failed (possibly related to argument 'tls-cert-file') - Unable to update TLS configuration. Check server logs."
	if err == nil || err.Error() != want {
		t.Fatalf("CONFIG SET tls-cert-file missing.crt = %v, want %q", err, want)
	}
	if v := admin.ConfigGet(ctx, "tls-cert-file").Val()["tls-cert-file"]; v != p.srv2Cert {
		t.Fatalf("after a failed CONFIG SET, tls-cert-file = %q, want %q", v, p.srv2Cert)
	}
	if cn := peerCN(); cn != "redshard-two" {
		t.Fatalf("after a failed CONFIG SET, certificate CN = %q, want redshard-two", cn)
	}
}

// TestTLSHostileClientsDoNotBlock: handshakes that never finish and
// garbage instead of a ClientHello hold no loop: plaintext and TLS clients
// are served meanwhile; garbage is disconnected at once, a silent
// handshake when its deadline passes.
func TestTLSHostileClientsDoNotBlock(t *testing.T) {
	p := newPKI(t)
	s, addr := startTLSServer(t, p, "--shards", "2")
	var silent, garbage []net.Conn
	for i := 0; i < 20; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		silent = append(silent, c)
		g, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close() })
		_, _ = g.Write([]byte("*1\r\n$4\r\nPING\r\n" + strings.Repeat("garbage", 100)))
		garbage = append(garbage, g)
	}
	start := time.Now()
	rc := s.raw(t)
	rc.do(resp("PING"), "+PONG\r\n")
	if err := tlsPing(addr, p.clientConfig(&p.client)); err != nil {
		t.Fatalf("TLS PING beside hostile connections: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("PING took %v beside hostile connections", d)
	}
	for i, g := range garbage {
		_ = g.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.Copy(io.Discard, g); err != nil && !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("garbage connection %d: not closed: %v", i, err)
		}
	}
	// The silent ones are closed by the handshake deadline.
	for i, c := range silent {
		_ = c.SetReadDeadline(time.Now().Add(15 * time.Second))
		if _, err := io.Copy(io.Discard, c); err != nil {
			t.Fatalf("silent connection %d: not closed after the handshake deadline: %v", i, err)
		}
	}
	if d := time.Since(start); d < 5*time.Second {
		t.Fatalf("silent handshakes closed after %v: before any deadline", d)
	}
}

// TestTLSClientThatStopsReadingIsBounded: a TLS client that sends
// requests and reads none of the replies is disconnected by
// client-output-buffer-limit, as a plaintext client is.
func TestTLSClientThatStopsReadingIsBounded(t *testing.T) {
	p := newPKI(t)
	s, addr := startTLSServer(t, p, "--client-output-buffer-limit", "normal 1mb 0 0")
	admin := s.client(t, 2)
	ctx := ctxT(t)
	if err := admin.Set(ctx, "v", strings.Repeat("v", 100<<10), 0).Err(); err != nil {
		t.Fatal(err)
	}
	c, _ := tlsRaw(t, addr, p.clientConfig(&p.client))
	req := strings.Repeat(resp("GET", "v"), 100)
	_ = c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	for i := 0; i < 50; i++ {
		if _, err := c.Write([]byte(req)); err != nil {
			break // disconnected already
		}
	}
	waitFor(t, "the non-reading TLS client to be disconnected", func() bool {
		return !strings.Contains(admin.ClientList(ctx).Val(), "addr="+c.LocalAddr().String())
	})
	s.waitLog(t, "scheduled to be closed ASAP for overcoming of output buffer limits")
}

// TestTLSPortOnly: port 0 with a tls-port serves TLS alone, with an
// encrypted (legacy PEM) key opened by tls-key-file-pass.
func TestTLSPortOnly(t *testing.T) {
	p := newPKI(t)
	keyPEM, _ := os.ReadFile(p.srvKey)
	blk, _ := pem.Decode(keyPEM)
	//nolint:staticcheck // legacy PEM encryption is the form tls-key-file-pass opens
	enc, err := x509.EncryptPEMBlock(rand.Reader, blk.Type, blk.Bytes, []byte("sesame"), x509.PEMCipherAES256)
	if err != nil {
		t.Fatal(err)
	}
	encKey := filepath.Join(p.dir, "server-enc.key")
	if err := os.WriteFile(encKey, pem.EncodeToMemory(enc), 0o600); err != nil {
		t.Fatal(err)
	}
	tlsPort := freePort(t)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(tlsPort))
	cmd := exec.Command(serverBin, "--port", "0", "--bind", "127.0.0.1", "--save", "", "--dir", t.TempDir(),
		"--tls-port", strconv.Itoa(tlsPort), "--tls-cert-file", p.srvCert, "--tls-key-file", encKey,
		"--tls-key-file-pass", "sesame", "--tls-ca-cert-file", p.ca)
	log := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := tlsPing(addr, p.clientConfig(&p.client))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no PONG on tls-port with port 0: %v\n%s", err, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if want := "Running mode=standalone, port=" + strconv.Itoa(tlsPort) + "."; !strings.Contains(log.String(), want) {
		t.Errorf("log has no %q (Redis names tls-port when port is 0):\n%s", want, log.String())
	}
	c := tlsRedis(t, addr, p.clientConfig(&p.client))
	if v := c.ConfigGet(ctxT(t), "port").Val()["port"]; v != "0" {
		t.Fatalf("CONFIG GET port = %q, want 0", v)
	}

	// The wrong pass: the start fails with Redis's words.
	bad := exec.Command(serverBin, "--port", "0", "--save", "", "--dir", t.TempDir(),
		"--tls-port", strconv.Itoa(freePort(t)), "--tls-cert-file", p.srvCert, "--tls-key-file", encKey,
		"--tls-key-file-pass", "wrong", "--tls-ca-cert-file", p.ca)
	out, err := bad.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Failed to configure TLS. Check logs for more info.") ||
		!strings.Contains(string(out), "Failed to load private key") {
		t.Fatalf("wrong tls-key-file-pass: err %v, output:\n%s", err, out)
	}
}

// TestTLSRedisCLIAndBenchmark: redis-cli --tls and redis-benchmark --tls
// with a client certificate work against the TLS port.
func TestTLSRedisCLIAndBenchmark(t *testing.T) {
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Skip("redis-cli not installed")
	}
	p := newPKI(t)
	tlsPort := freePort(t)
	startServer(t, append(p.serverArgs(), "--tls-port", strconv.Itoa(tlsPort))...)
	args := []string{"-h", "127.0.0.1", "-p", strconv.Itoa(tlsPort), "--tls", "--cacert", p.ca, "--cert", p.cliCert, "--key", p.cliKey}
	out, err := exec.Command(cli, append(args, "SET", "cli", "over tls")...).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "OK" {
		t.Fatalf("redis-cli --tls SET: %v %q", err, out)
	}
	out, err = exec.Command(cli, append(args, "GET", "cli")...).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "over tls" {
		t.Fatalf("redis-cli --tls GET: %v %q", err, out)
	}
	bench, err := exec.LookPath("redis-benchmark")
	if err != nil {
		t.Skip("redis-benchmark not installed")
	}
	out, err = exec.Command(bench, append(args, "-t", "set,get", "-n", "5000", "-c", "10", "-P", "4", "-q")...).CombinedOutput()
	if err != nil || strings.Count(string(out), "requests per second") != 2 {
		t.Fatalf("redis-benchmark --tls: %v\n%s", err, out)
	}
}

// TestTLSReplication: a replica with tls-replication yes syncs from the
// master's TLS port (both sides certified by the CA) and follows its
// writes.
func TestTLSReplication(t *testing.T) {
	p := newPKI(t)
	m, mAddr := startTLSServer(t, p, "--repl-diskless-sync-delay", "0")
	_, mPort, _ := net.SplitHostPort(mAddr)
	rep := startServer(t, append(p.serverArgs(), "--tls-replication", "yes")...)
	ctx := ctxT(t)
	mc, rc := m.client(t, 2), rep.client(t, 2)
	if err := mc.Set(ctx, "before", "sync", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rc.Do(ctx, "REPLICAOF", "127.0.0.1", mPort).Err(); err != nil {
		t.Fatalf("REPLICAOF: %v", err)
	}
	waitFor(t, "the replica's link up", func() bool {
		return strings.Contains(rc.Info(ctx, "replication").Val(), "master_link_status:up")
	})
	if err := mc.Set(ctx, "after", "stream", 0).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the streamed write on the replica", func() bool { return rc.Get(ctx, "after").Val() == "stream" })
	if v := rc.Get(ctx, "before").Val(); v != "sync" {
		t.Fatalf("replica GET before = %q, want sync", v)
	}
	if info := mc.Info(ctx, "replication").Val(); !strings.Contains(info, "connected_slaves:1") {
		t.Fatalf("master INFO replication:\n%s", info)
	}
}

// TestTLSConfigSetPort: CONFIG SET tls-port opens the TLS listener at run
// time (configuring TLS first), and tls-port 0 closes it.
func TestTLSConfigSetPort(t *testing.T) {
	p := newPKI(t)
	s := startServer(t, p.serverArgs()...)
	admin := s.client(t, 2)
	ctx := ctxT(t)
	port := freePort(t)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if err := tlsPing(addr, p.clientConfig(&p.client)); err == nil {
		t.Fatal("TLS served before tls-port was set")
	}
	if err := admin.ConfigSet(ctx, "tls-port", strconv.Itoa(port)).Err(); err != nil {
		t.Fatalf("CONFIG SET tls-port %d: %v", port, err)
	}
	if err := tlsPing(addr, p.clientConfig(&p.client)); err != nil {
		t.Fatalf("after CONFIG SET tls-port: %v", err)
	}
	if err := admin.ConfigSet(ctx, "tls-port", "0").Err(); err != nil {
		t.Fatalf("CONFIG SET tls-port 0: %v", err)
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Fatal("tls-port 0: the TLS port still accepts")
	}
}

// TestTLSEncryptedPKCS8Key: the server's key encrypted by OpenSSL as PKCS#8
// (PBES2, PBKDF2-HMAC-SHA256, AES-256-CBC, OpenSSL 3's default form) is
// opened with tls-key-file-pass, and mutual TLS works with it.
func TestTLSEncryptedPKCS8Key(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl not installed")
	}
	p := newPKI(t)
	encKey := filepath.Join(p.dir, "server-pkcs8.key")
	if out, err := exec.Command("openssl", "pkcs8", "-topk8", "-v2", "aes-256-cbc", "-in", p.srvKey,
		"-passout", "pass:sesame", "-out", encKey).CombinedOutput(); err != nil {
		t.Fatalf("openssl pkcs8: %v: %s", err, out)
	}
	if b, _ := os.ReadFile(encKey); !strings.HasPrefix(string(b), "-----BEGIN ENCRYPTED PRIVATE KEY-----") {
		t.Fatalf("openssl wrote %q", b)
	}
	p.srvKey = encKey
	_, addr := startTLSServer(t, p, "--tls-key-file-pass", "sesame")
	if err := tlsPing(addr, p.clientConfig(&p.client)); err != nil {
		t.Fatal(err)
	}
}

// tlsResumes dials with the client configuration (its session cache), runs
// a PING (which also reads a TLS 1.3 ticket) and reports whether the
// handshake resumed a session.
func tlsResumes(t *testing.T, addr string, cfg *tls.Config) bool {
	t.Helper()
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		t.Fatalf("tls dial: %v", err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte(resp("PING"))); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != "+PONG\r\n" {
		t.Fatalf("PING: %q %v", line, err)
	}
	return c.ConnectionState().DidResume
}

// TestTLSSessionResumption: a client resumes its session (TLS 1.2 and 1.3)
// while the ticket is no older than tls-session-cache-timeout, and makes a
// full handshake after; tls-session-caching no resumes none.
func TestTLSSessionResumption(t *testing.T) {
	p := newPKI(t)
	s, addr := startTLSServer(t, p, "--tls-session-cache-timeout", "2")
	clients := map[string]*tls.Config{}
	for name, v := range map[string]uint16{"TLS 1.2": tls.VersionTLS12, "TLS 1.3": tls.VersionTLS13} {
		cfg := p.clientConfig(&p.client)
		cfg.MinVersion, cfg.MaxVersion = v, v
		cfg.ClientSessionCache = tls.NewLRUClientSessionCache(4)
		clients[name] = cfg
		if tlsResumes(t, addr, cfg) {
			t.Fatalf("%s: the first connection resumed", name)
		}
		if !tlsResumes(t, addr, cfg) {
			t.Fatalf("%s: the second connection did not resume", name)
		}
	}
	time.Sleep(3500 * time.Millisecond)
	for name, cfg := range clients {
		if tlsResumes(t, addr, cfg) {
			t.Errorf("%s: resumed a session older than tls-session-cache-timeout", name)
		}
		if !tlsResumes(t, addr, cfg) {
			t.Errorf("%s: the ticket of the full handshake did not resume", name)
		}
	}
	if got := s.client(t, 2).Do(ctxT(t), "CONFIG", "SET", "tls-session-caching", "no").Err(); got != nil {
		t.Fatal(got)
	}
	for name, cfg := range clients {
		tlsResumes(t, addr, cfg)
		if tlsResumes(t, addr, cfg) {
			t.Errorf("%s: resumed with tls-session-caching no", name)
		}
	}
}

// A TLS connection made while a script is busy and the only loop is
// stuck is served (its handshake, then -BUSY) and handed to the loop once
// the script ends, with the command it had begun (server/hold.go).
func TestTLSConnectWhileScriptBusy(t *testing.T) {
	p := newPKI(t)
	s, addr := startTLSServer(t, p, "--shards", "1", "--tls-auth-clients", "no")
	admin := s.raw(t)
	admin.do(resp("CONFIG", "SET", "busy-reply-threshold", "50"), "+OK\r\n")
	runner := s.raw(t)
	runner.write(resp("EVAL", "while true do end", "0"))
	busy := waitBusy(t, admin)
	tc, br := tlsRaw(t, addr, p.clientConfig(nil))
	c := &rawConn{t: t, c: tc, r: br}
	c.do(resp("PING"), busy)
	c.write("*2\r\n$4\r\nECHO\r\n$2\r\nh")
	admin.do(resp("SCRIPT", "KILL"), "+OK\r\n")
	if l := runner.line(); !strings.Contains(l, "Script killed") {
		t.Fatalf("the killed script answered %q", l)
	}
	c.write("i\r\n")
	c.expect("$2\r\nhi\r\n")
	c.do(resp("PING"), "+PONG\r\n")
}

// TestTLSBusyPoll: loops that serve TLS clients poll for their next round
// before they sleep (server/busypoll.go), counted by
// redshard_busy_poll_windows_total; busy-poll-usecs 0 stops it, and rounds
// of plaintext clients poll only with busy-poll-plaintext yes.
func TestTLSBusyPoll(t *testing.T) {
	p := newPKI(t)
	mport := freePort(t)
	s, addr := startTLSServer(t, p, "--shards", "1", "--metrics-port", strconv.Itoa(mport))
	windows := func() float64 {
		_, samples := scrapeMetrics(t, mport)
		return samples[`redshard_busy_poll_windows_total{outcome="event"}`] +
			samples[`redshard_busy_poll_windows_total{outcome="timeout"}`]
	}
	// load runs GETs from 16 connections for 300 ms.
	load := func(c *redis.Client) {
		t.Helper()
		ctx := ctxT(t)
		done := make(chan error, 16)
		stop := time.Now().Add(300 * time.Millisecond)
		for i := 0; i < 16; i++ {
			go func() {
				var err error
				for err == nil && time.Now().Before(stop) {
					err = c.Get(ctx, "k").Err()
					if errors.Is(err, redis.Nil) {
						err = nil
					}
				}
				done <- err
			}()
		}
		for i := 0; i < 16; i++ {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
	}
	tc := tlsRedis(t, addr, p.clientConfig(&p.client))
	pc := s.clientWith(t, func(o *redis.Options) { o.PoolSize = 16 })
	ctx := ctxT(t)

	if v, _ := tc.ConfigGet(ctx, "busy-poll-*").Result(); v["busy-poll-usecs"] != "20" || v["busy-poll-plaintext"] != "no" {
		t.Fatalf("defaults: %v", v)
	}
	before := windows()
	load(pc)
	if w := windows(); w != before {
		t.Errorf("plaintext clients: %v windows, want none", w-before)
	}
	load(tc)
	if windows() == before {
		t.Fatal("TLS clients: no busy-poll window")
	}

	if err := tc.ConfigSet(ctx, "busy-poll-usecs", "0").Err(); err != nil {
		t.Fatal(err)
	}
	// Counted after the CONFIG SET: the loop ran it after the last window
	// of the load above had ended.
	after := windows()
	load(tc)
	if w := windows(); w != after {
		t.Errorf("busy-poll-usecs 0: %v windows, want none", w-after)
	}

	if err := tc.ConfigSet(ctx, "busy-poll-usecs", "20").Err(); err != nil {
		t.Fatal(err)
	}
	if err := tc.ConfigSet(ctx, "busy-poll-plaintext", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	before = windows()
	load(pc)
	if windows() == before {
		t.Error("busy-poll-plaintext yes: no window for plaintext clients")
	}
}
