package server

// TLS: tls-port, mutual TLS, and the bridge from crypto/tls to the loops.
//
// The bridge. gnet owns the plaintext loops and knows nothing of TLS, and
// crypto/tls wants a net.Conn it can block on. redshard splits a TLS
// connection's life in two:
//
//  1. The handshake runs in a goroutine of its own, on a socket redshard
//     accepted itself (tls-port is not a gnet listener), under a deadline
//     (tlsHandshakeTimeout) and a cap on handshakes in flight (maxclients):
//     a client that never finishes its handshake, or sends garbage instead
//     of a ClientHello, costs a goroutine until the deadline or the first
//     bad record, and never touches a loop.
//  2. Once the handshake is done, the TCP socket itself is handed to a loop
//     (gnet's Enroll, round robin, as listen.go does for the sockets of
//     CONFIG SET port). From then on the loop reads the ciphertext like any
//     other input, and the tls.Conn, now over tlsPipe (an in-memory
//     net.Conn), turns it into plaintext inside OnTraffic: the pipe's Read
//     hands tls.Conn the bytes the loop just read and then answers "would
//     block" (a temporary net.Error, which tls.Conn does not keep as a
//     failure), so tls.Conn.Read returns every whole record and keeps a
//     partial one for the next read. The plaintext goes to the client's
//     usual onData; replies are sealed by tls.Conn.Write into the pipe's
//     output and written to the socket with the same single c.Write per
//     batch as a plaintext client (writeOut).
//
// So a TLS client is an ordinary client of its loop: same parser, same
// batches and hops, same group commit (replies still wait in cl.out for
// the durable position), same output buffer limits (OutboundBuffered
// counts the sealed bytes, about 22 bytes more per 16 KB record than the
// plaintext), and CLIENT LIST shows the socket's real peer address. There
// is no second socket, no goroutine per connection after the handshake and
// no buffer outside the loop: a client that stops reading fills gnet's
// outbound buffer, which client-output-buffer-limit bounds as for any
// client.
//
// The cost is the cipher work on the loop plus two copies per direction
// (the loop's read buffer into tls.Conn's record buffer, the record's
// plaintext into the client's plaintext buffer; on the way out the sealed
// record into the pipe's output), and no system call beyond a plaintext
// client's. Profiled at SET -P 16, 50 clients, --shards 1: opening
// records (tlsConn.read) is 6% of the server's CPU, sealing them 2.5%, the
// handshakes of the 50 connections 4.6%, the socket reads and writes 31%.
// The design first considered, a socketpair between a goroutine pair doing
// crypto/tls and a loop, costs four more system calls and two goroutine
// wake-ups per round trip, and makes CLIENT LIST show the socketpair unless
// patched; it was not built. The cost beside redis-server is measured by
// `go run ./bench -only tls` (bench/tls.go). After a round that served TLS
// clients a loop polls briefly for the next one before it sleeps, so that
// a client at -P 1 does not pay to wake it (busypoll.go).
//
// Certificates are read when the server starts and again on CONFIG SET of
// any tls-* option: a new *tls.Config is built and swapped atomically, so
// new handshakes use it and a bad file fails the CONFIG SET with Redis's
// error, keeping the old configuration. Connections already open keep
// their session.
//
// What Go's crypto/tls lacks, and how each option maps:
//   - tls-ciphers (TLS 1.2, OpenSSL names) maps to Go's suites by name; a
//     name Go lacks fails with its name in the log.
//   - tls-ciphersuites (TLS 1.3): Go always offers its three TLS 1.3
//     suites; the option is accepted when it names only those, with a
//     warning that it can't restrict them.
//   - tls-prefer-server-ciphers: Go chooses by its own order (it ignores
//     the client's preference when the server lacks AES hardware); accepted.
//   - tls-session-caching maps to session tickets on/off (Go resumes
//     only from tickets, TLS 1.2's and TLS 1.3's, which it encrypts with
//     keys of its own making, rotated daily).
//   - tls-session-cache-timeout: a ticket issued longer ago than that is
//     not resumed (sessionTimeout); 0 resumes none. Read live.
//   - tls-session-cache-size is accepted and unused: the server keeps no
//     sessions, they travel in the tickets.
//   - tls-dh-params-file: Go has no finite-field DH; accepted, unused.
//   - tls-key-file-pass decrypts legacy PEM encryption ("Proc-Type:
//     4,ENCRYPTED", what `openssl rsa -aes256` writes) and encrypted PKCS#8
//     ("ENCRYPTED PRIVATE KEY", OpenSSL 3's default) with PBES2, PBKDF2 and
//     AES-CBC or DES-EDE3-CBC (pkcs8.go); PBES1 and scrypt are refused by
//     name.
//   - tls-cluster is accepted (redshard has no cluster bus).

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// tlsHandshakeTimeout bounds a handshake: a client that has not finished
// it by then is disconnected.
const tlsHandshakeTimeout = 10 * time.Second

var cfgEnumTLSAuthClients = []string{"no", "yes", "optional"}

// cfgTLS holds the tls-* options; Config embeds it.
type cfgTLS struct {
	tlsPort               atomic.Int64
	tlsSessionCacheSize   atomic.Int64
	tlsSessionCacheTO     atomic.Int64
	tlsCluster            atomic.Bool
	tlsReplication        atomic.Bool
	tlsPreferServerCipher atomic.Bool
	tlsSessionCaching     atomic.Bool
	tlsAuthClients        atomic.Int64
	tlsCertFile           atomicString
	tlsKeyFile            atomicString
	tlsKeyFilePass        atomicString
	tlsClientCertFile     atomicString
	tlsClientKeyFile      atomicString
	tlsClientKeyFilePass  atomicString
	tlsDHParamsFile       atomicString
	tlsCACertFile         atomicString
	tlsCACertDir          atomicString
	tlsProtocols          atomicString
	tlsCiphers            atomicString
	tlsCiphersuites       atomicString
}

// tlsOptionNames are the options whose change rebuilds the TLS
// configuration (tls-port has its own hook).
var tlsOptionNames = []string{
	"tls-session-cache-size", "tls-session-cache-timeout", "tls-cluster", "tls-replication",
	"tls-auth-clients", "tls-prefer-server-ciphers", "tls-session-caching", "tls-cert-file",
	"tls-key-file", "tls-key-file-pass", "tls-client-cert-file", "tls-client-key-file",
	"tls-client-key-file-pass", "tls-dh-params-file", "tls-ca-cert-file", "tls-ca-cert-dir",
	"tls-protocols", "tls-ciphers", "tls-ciphersuites",
}

// cfgTLSTable returns the tls-* rows: Redis 7.0.15's names, defaults and
// bounds, all mutable.
func cfgTLSTable() []*cfgOption {
	s := func(name string, f func(*Config) *atomicString) *cfgOption {
		return cfgStrOpt(name, cfgMutable|cfgEmptyIsNull, "", nil, f)
	}
	return []*cfgOption{
		cfgNumOpt("tls-port", "", cfgMutable, 0, 65535, "0", func(c *Config) *atomic.Int64 { return &c.tlsPort }),
		cfgNumOpt("tls-session-cache-size", "", cfgMutable, 0, cfgIntMax, "20480", func(c *Config) *atomic.Int64 { return &c.tlsSessionCacheSize }),
		cfgNumOpt("tls-session-cache-timeout", "", cfgMutable, 0, cfgIntMax, "300", func(c *Config) *atomic.Int64 { return &c.tlsSessionCacheTO }),
		cfgBoolOpt("tls-cluster", "", cfgMutable, "no", func(c *Config) *atomic.Bool { return &c.tlsCluster }),
		cfgBoolOpt("tls-replication", "", cfgMutable, "no", func(c *Config) *atomic.Bool { return &c.tlsReplication }),
		cfgEnumOpt("tls-auth-clients", cfgMutable, cfgEnumTLSAuthClients, "yes", func(c *Config) *atomic.Int64 { return &c.tlsAuthClients }),
		cfgBoolOpt("tls-prefer-server-ciphers", "", cfgMutable, "no", func(c *Config) *atomic.Bool { return &c.tlsPreferServerCipher }),
		cfgBoolOpt("tls-session-caching", "", cfgMutable, "yes", func(c *Config) *atomic.Bool { return &c.tlsSessionCaching }),
		s("tls-cert-file", func(c *Config) *atomicString { return &c.tlsCertFile }),
		s("tls-key-file", func(c *Config) *atomicString { return &c.tlsKeyFile }),
		s("tls-key-file-pass", func(c *Config) *atomicString { return &c.tlsKeyFilePass }),
		s("tls-client-cert-file", func(c *Config) *atomicString { return &c.tlsClientCertFile }),
		s("tls-client-key-file", func(c *Config) *atomicString { return &c.tlsClientKeyFile }),
		s("tls-client-key-file-pass", func(c *Config) *atomicString { return &c.tlsClientKeyFilePass }),
		s("tls-dh-params-file", func(c *Config) *atomicString { return &c.tlsDHParamsFile }),
		s("tls-ca-cert-file", func(c *Config) *atomicString { return &c.tlsCACertFile }),
		s("tls-ca-cert-dir", func(c *Config) *atomicString { return &c.tlsCACertDir }),
		s("tls-protocols", func(c *Config) *atomicString { return &c.tlsProtocols }),
		s("tls-ciphers", func(c *Config) *atomicString { return &c.tlsCiphers }),
		s("tls-ciphersuites", func(c *Config) *atomicString { return &c.tlsCiphersuites }),
	}
}

// TLSPort is tls-port (0: no TLS listener).
func (c *Config) TLSPort() int { return int(c.tlsPort.Load()) }

// TLSReplication is tls-replication.
func (c *Config) TLSReplication() bool { return c.tlsReplication.Load() }

// tlsServer is the server's TLS state.
type tlsServer struct {
	server atomic.Pointer[tls.Config] // for accepted connections
	client atomic.Pointer[tls.Config] // for outgoing links (replication)

	mu   sync.Mutex   // guards ln
	ln   net.Listener // the tls-port socket, nil if none
	port int

	inHandshake atomic.Int64 // handshakes in flight
}

// tlsEnabled reports whether TLS must be configured (Redis's condition for
// tlsConfigure).
func (c *Config) tlsEnabled() bool {
	return c.tlsPort.Load() != 0 || c.tlsReplication.Load() || c.tlsCluster.Load()
}

// tlsConfigure builds the TLS configuration from the options and installs
// it, or logs why it can't and leaves the current one (Redis's
// tlsConfigure: atomic, the old context stays on failure).
func (srv *Server) tlsConfigure() error {
	sc, cc, err := buildTLSConfigs(srv.cfg, srv.log)
	if err != nil {
		srv.log.Warningf("%s", err.Error())
		return err
	}
	srv.tls.server.Store(sc)
	srv.tls.client.Store(cc)
	return nil
}

func buildTLSConfigs(c *Config, log *Logger) (*tls.Config, *tls.Config, error) {
	certFile, keyFile := c.tlsCertFile.Load(), c.tlsKeyFile.Load()
	if certFile == "" {
		return nil, nil, errors.New("No tls-cert-file configured!")
	}
	if keyFile == "" {
		return nil, nil, errors.New("No tls-key-file configured!")
	}
	auth := cfgEnumTLSAuthClients[c.tlsAuthClients.Load()]
	caFile, caDir := c.tlsCACertFile.Load(), c.tlsCACertDir.Load()
	if (auth != "no" || c.tlsCluster.Load() || c.tlsReplication.Load()) && caFile == "" && caDir == "" {
		return nil, nil, errors.New("Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication or tls-auth-clients are enabled!")
	}
	minV, maxV, err := parseTLSProtocols(c.tlsProtocols.Load())
	if err != nil {
		return nil, nil, err
	}
	cert, err := loadKeyPair(certFile, keyFile, c.tlsKeyFilePass.Load())
	if err != nil {
		return nil, nil, err
	}
	var pool *x509.CertPool
	if caFile != "" || caDir != "" {
		if pool, err = loadCAs(caFile, caDir); err != nil {
			return nil, nil, fmt.Errorf("Failed to configure CA certificate(s) file/directory: %v", err)
		}
	}
	var suites []uint16
	if v := c.tlsCiphers.Load(); v != "" {
		if suites, err = parseTLSCiphers(v); err != nil {
			return nil, nil, fmt.Errorf("Failed to configure ciphers: %s: %v", v, err)
		}
	}
	if v := c.tlsCiphersuites.Load(); v != "" {
		if err := checkTLS13Suites(v); err != nil {
			return nil, nil, fmt.Errorf("Failed to configure ciphersuites: %s: %v", v, err)
		}
		if log != nil {
			log.Verbosef("tls-ciphersuites: Go offers all of its TLS 1.3 suites; the list is checked, not applied")
		}
	}
	sc := &tls.Config{
		Certificates:                []tls.Certificate{cert},
		MinVersion:                  minV,
		MaxVersion:                  maxV,
		CipherSuites:                suites,
		ClientCAs:                   pool,
		SessionTicketsDisabled:      !c.tlsSessionCaching.Load(),
		DynamicRecordSizingDisabled: true, // replies go out whole, in full records
	}
	sessionTimeout(sc, c)
	switch auth {
	case "yes":
		sc.ClientAuth = tls.RequireAndVerifyClientCert
	case "optional":
		sc.ClientAuth = tls.VerifyClientCertIfGiven
	default:
		sc.ClientAuth = tls.NoClientCert
	}
	// The outgoing side: the client certificate if both files are set,
	// else the server's (as Redis uses its one context for both).
	cc := &tls.Config{MinVersion: minV, MaxVersion: maxV, CipherSuites: suites, RootCAs: pool,
		Certificates: []tls.Certificate{cert}}
	if cf, kf := c.tlsClientCertFile.Load(), c.tlsClientKeyFile.Load(); cf != "" && kf != "" {
		ccert, err := loadKeyPair(cf, kf, c.tlsClientKeyFilePass.Load())
		if err != nil {
			return nil, nil, err
		}
		cc.Certificates = []tls.Certificate{ccert}
	}
	return sc, cc, nil
}

// sessionTimeout makes sc refuse to resume from a ticket older than
// tls-session-cache-timeout (OpenSSL's SSL_CTX_set_timeout, which Redis
// sets from it): the connection then makes a full handshake. Go's own limit
// is 7 days. crypto/tls does not export a session's creation time, so it is
// read from the session's serialized form (sessionCreatedAt). A ticket is
// judged by when it was issued: TLS 1.2 keeps the first issue time when it
// re-issues a ticket on resumption, TLS 1.3 issues a new one.
func sessionTimeout(sc *tls.Config, c *Config) {
	sc.UnwrapSession = func(identity []byte, cs tls.ConnectionState) (*tls.SessionState, error) {
		ss, err := sc.DecryptTicket(identity, cs)
		if err != nil || ss == nil {
			return nil, nil // not ours, or not readable: a full handshake
		}
		created, ok := sessionCreatedAt(ss)
		now := time.Now().Unix()
		if !ok || created <= 0 || created > now+60 {
			return nil, nil // not a time: never resume what can't be judged
		}
		// Whole seconds, as the ticket has them: a ticket of timeout
		// seconds or less is resumed.
		if to := c.tlsSessionCacheTO.Load(); to == 0 || now-created > to {
			return nil, nil
		}
		return ss, nil
	}
}

// sessionCreatedAt is a session's creation time (Unix seconds), from the
// start of SessionState.Bytes: version uint16, type uint8, cipher suite
// uint16, created_at uint64, big endian. Go keeps that layout (new fields go
// at the end) so that tickets stay readable across its versions.
func sessionCreatedAt(ss *tls.SessionState) (int64, bool) {
	b, err := ss.Bytes()
	if err != nil || len(b) < 13 {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(b[5:13])), true
}

// parseTLSProtocols maps tls-protocols to a version range; Redis's default
// (unset) is TLSv1.2 and TLSv1.3. Go takes a range, so "TLSv1 TLSv1.3"
// allows the versions between too.
func parseTLSProtocols(v string) (uint16, uint16, error) {
	if v == "" {
		return tls.VersionTLS12, tls.VersionTLS13, nil
	}
	var minV, maxV uint16
	for _, t := range strings.Fields(v) {
		var ver uint16
		switch strings.ToLower(t) {
		case "tlsv1":
			ver = tls.VersionTLS10
		case "tlsv1.1":
			ver = tls.VersionTLS11
		case "tlsv1.2":
			ver = tls.VersionTLS12
		case "tlsv1.3":
			ver = tls.VersionTLS13
		default:
			return 0, 0, errors.New("Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'.")
		}
		if minV == 0 || ver < minV {
			minV = ver
		}
		if ver > maxV {
			maxV = ver
		}
	}
	if minV == 0 {
		return 0, 0, errors.New("Invalid tls-protocols configuration string")
	}
	return minV, maxV, nil
}

// opensslCiphers maps OpenSSL's TLS 1.2 cipher names to Go's suites.
var opensslCiphers = map[string]uint16{
	"ECDHE-ECDSA-AES128-GCM-SHA256": tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	"ECDHE-RSA-AES128-GCM-SHA256":   tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	"ECDHE-ECDSA-AES256-GCM-SHA384": tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	"ECDHE-RSA-AES256-GCM-SHA384":   tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	"ECDHE-ECDSA-CHACHA20-POLY1305": tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	"ECDHE-RSA-CHACHA20-POLY1305":   tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
	"ECDHE-ECDSA-AES128-SHA":        tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA,
	"ECDHE-RSA-AES128-SHA":          tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA,
	"ECDHE-ECDSA-AES256-SHA":        tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA,
	"ECDHE-RSA-AES256-SHA":          tls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA,
	"ECDHE-ECDSA-AES128-SHA256":     tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256,
	"ECDHE-RSA-AES128-SHA256":       tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256,
	"AES128-GCM-SHA256":             tls.TLS_RSA_WITH_AES_128_GCM_SHA256,
	"AES256-GCM-SHA384":             tls.TLS_RSA_WITH_AES_256_GCM_SHA384,
	"AES128-SHA":                    tls.TLS_RSA_WITH_AES_128_CBC_SHA,
	"AES256-SHA":                    tls.TLS_RSA_WITH_AES_256_CBC_SHA,
	"AES128-SHA256":                 tls.TLS_RSA_WITH_AES_128_CBC_SHA256,
	"DES-CBC3-SHA":                  tls.TLS_RSA_WITH_3DES_EDE_CBC_SHA,
	"ECDHE-RSA-DES-CBC3-SHA":        tls.TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA,
}

// parseTLSCiphers maps an OpenSSL cipher list (names separated by ':',
// ',' or spaces) to Go's suites. DEFAULT and HIGH mean Go's defaults;
// exclusions ("!aNULL", "-X") are skipped, as Go never offers those.
func parseTLSCiphers(v string) ([]uint16, error) {
	var out []uint16
	def := false
	for _, name := range strings.FieldsFunc(v, func(r rune) bool { return r == ':' || r == ',' || r == ' ' }) {
		switch {
		case name == "DEFAULT" || name == "HIGH":
			def = true
		case strings.HasPrefix(name, "!") || strings.HasPrefix(name, "-"):
		default:
			id, ok := opensslCiphers[strings.TrimPrefix(name, "+")]
			if !ok {
				return nil, fmt.Errorf("cipher %q is not supported by Go's crypto/tls", name)
			}
			out = append(out, id)
		}
	}
	if def && len(out) == 0 {
		return nil, nil
	}
	if len(out) == 0 {
		return nil, errors.New("no cipher Go supports")
	}
	return out, nil
}

// checkTLS13Suites accepts a tls-ciphersuites list naming only the TLS 1.3
// suites Go has.
func checkTLS13Suites(v string) error {
	for _, name := range strings.FieldsFunc(v, func(r rune) bool { return r == ':' }) {
		switch name {
		case "TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256":
		default:
			return fmt.Errorf("ciphersuite %q is not supported by Go's crypto/tls", name)
		}
	}
	return nil
}

// loadKeyPair reads a certificate and its key, decrypting the key with
// pass when it is PEM-encrypted.
func loadKeyPair(certFile, keyFile, pass string) (tls.Certificate, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("Failed to load certificate: %s: %v", certFile, err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("Failed to load private key: %s: %v", keyFile, err)
	}
	if blk, _ := pem.Decode(keyPEM); blk != nil {
		switch {
		case blk.Type == "ENCRYPTED PRIVATE KEY":
			if pass == "" {
				return tls.Certificate{}, fmt.Errorf("Failed to load private key: %s: the key is encrypted and tls-key-file-pass is not set", keyFile)
			}
			der, err := decryptPKCS8(blk.Bytes, []byte(pass))
			if err != nil {
				return tls.Certificate{}, fmt.Errorf("Failed to load private key: %s: %v", keyFile, err)
			}
			keyPEM = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
		case x509.IsEncryptedPEMBlock(blk): //nolint:staticcheck // legacy PEM encryption is what tls-key-file-pass meets
			if pass == "" {
				return tls.Certificate{}, fmt.Errorf("Failed to load private key: %s: the key is encrypted and tls-key-file-pass is not set", keyFile)
			}
			der, err := x509.DecryptPEMBlock(blk, []byte(pass)) //nolint:staticcheck
			if err != nil {
				return tls.Certificate{}, fmt.Errorf("Failed to load private key: %s: %v", keyFile, err)
			}
			keyPEM = pem.EncodeToMemory(&pem.Block{Type: blk.Type, Bytes: der})
		}
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("Failed to load certificate: %s: %v", certFile, err)
	}
	return cert, nil
}

// loadCAs reads the CA file and every certificate file in the CA
// directory.
func loadCAs(file, dir string) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	n := 0
	add := func(path string) error {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if pool.AppendCertsFromPEM(b) {
			n++
		}
		return nil
	}
	if file != "" {
		if err := add(file); err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, fmt.Errorf("%s: no certificate found", file)
		}
	}
	if dir != "" {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if e.Type().IsRegular() || e.Type()&os.ModeSymlink != 0 {
				_ = add(filepath.Join(dir, e.Name()))
			}
		}
	}
	if n == 0 {
		return nil, errors.New("no CA certificate found")
	}
	return pool, nil
}

// initTLS configures TLS and opens tls-port at start (Redis's initServer
// and initListeners), and hooks CONFIG SET of the tls-* options.
func (srv *Server) initTLS() error {
	if srv.cfg.tlsEnabled() {
		if srv.tlsConfigure() != nil {
			return errors.New("Failed to configure TLS. Check logs for more info.")
		}
	}
	if p := srv.cfg.TLSPort(); p != 0 {
		if err := srv.tlsListen(p); err != nil {
			return fmt.Errorf("Failed listening on port %d (TLS), aborting.", p)
		}
	}
	for _, name := range tlsOptionNames {
		srv.cfg.OnApply(name, func() error {
			if srv.cfg.tlsEnabled() && srv.tlsConfigure() != nil {
				return errors.New("Unable to update TLS configuration. Check server logs.")
			}
			return nil
		})
	}
	srv.cfg.OnApply("tls-port", func() error {
		if srv.tls.server.Load() == nil && srv.tlsConfigure() != nil {
			return errors.New("Unable to update TLS configuration. Check server logs.")
		}
		if srv.tlsListen(srv.cfg.TLSPort()) != nil {
			return errors.New("Unable to listen on this port. Check server logs.")
		}
		return nil
	})
	go func() {
		<-srv.stopCh
		_ = srv.tlsListen(0)
	}()
	return nil
}

// tlsListen makes the tls-port socket listen on port (0: closes it), on
// every bind address's first usable one, as the plaintext port.
func (srv *Server) tlsListen(port int) error {
	ts := &srv.tls
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if port == ts.port && (port == 0) == (ts.ln == nil) {
		return nil
	}
	var ln net.Listener
	if port != 0 {
		host := "127.0.0.1"
		for _, b := range srv.cfg.Bind() {
			b = strings.TrimPrefix(b, "-")
			if b == "*" {
				b = "0.0.0.0"
			}
			if b == "::*" {
				b = "::"
			}
			host = b
			break
		}
		lc := net.ListenConfig{}
		var err error
		ln, err = lc.Listen(context.Background(), "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			srv.log.Warningf("Warning: Could not create server TCP listening socket %s:%d: %v", host, port, err)
			return err
		}
	}
	if ts.ln != nil {
		ts.ln.Close()
	}
	ts.ln, ts.port = ln, port
	if ln != nil {
		go srv.tlsAccept(ln)
	}
	return nil
}

// tlsAccept accepts on the tls-port socket until it is closed; each
// connection's handshake runs in its own goroutine.
func (srv *Server) tlsAccept(ln net.Listener) {
	acceptEach(ln, func(c net.Conn) {
		tcp, ok := c.(*net.TCPConn)
		if !ok || srv.stopping.Load() || len(srv.loops) == 0 ||
			srv.tls.inHandshake.Load() >= srv.cfg.MaxClients() {
			c.Close()
			return
		}
		srv.tls.inHandshake.Add(1)
		go srv.tlsHandshake(tcp)
	})
}

func (srv *Server) tlsHandshake(tcp *net.TCPConn) {
	defer srv.tls.inHandshake.Add(-1)
	cfg := srv.tls.server.Load()
	if cfg == nil {
		tcp.Close()
		return
	}
	p := &tlsPipe{raw: tcp, laddr: tcp.LocalAddr(), raddr: tcp.RemoteAddr()}
	tc := tls.Server(p, cfg)
	_ = tcp.SetDeadline(time.Now().Add(tlsHandshakeTimeout))
	if err := tc.Handshake(); err != nil {
		srv.log.Verbosef("Error accepting a client connection: %v (addr=%s laddr=%s)", err, p.raddr, p.laddr)
		tcp.Close()
		return
	}
	_ = tcp.SetDeadline(time.Time{})
	_ = tcp.SetNoDelay(true)
	if ka := srv.cfg.TCPKeepAlive(); ka > 0 {
		_ = tcp.SetKeepAlive(true)
		_ = tcp.SetKeepAlivePeriod(time.Duration(ka) * time.Second)
	}
	p.raw = nil                                // from here on the loop feeds it (tlsConn.read)
	srv.placeConn(tcp, &tlsConn{tc: tc, p: p}) // a loop that is not stuck, or held (hold.go)
}

// tlsConn is a TLS client's session once its handshake is done: only its
// loop touches it, or busy.go's watchdog while the loop is stuck.
type tlsConn struct {
	tc    *tls.Conn
	p     *tlsPipe
	plain []byte // the plaintext of the last read, reused
	err   error  // a fatal TLS error (bad record, close_notify)
}

// read turns the ciphertext the loop read into plaintext: every whole
// record in it, the rest kept by tls.Conn for the next read. The result
// is valid until the next read.
func (t *tlsConn) read(data []byte) []byte {
	t.p.in = data
	t.plain = t.plain[:0]
	for {
		if cap(t.plain)-len(t.plain) < 16<<10 {
			t.plain = append(t.plain, make([]byte, 16<<10+len(t.plain))...)[:len(t.plain)]
		}
		n, err := t.tc.Read(t.plain[len(t.plain):cap(t.plain)])
		t.plain = t.plain[:len(t.plain)+n]
		if err != nil {
			if err != errWouldBlock {
				t.err = err
			}
			break
		}
	}
	t.p.in = nil
	if cap(t.plain) > 256<<10 && len(t.plain) < 16<<10 {
		b := append([]byte(nil), t.plain...)
		t.plain = b
	}
	return t.plain
}

// seal encrypts b and returns the ciphertext to write (valid until the
// next seal), together with anything tls.Conn produced meanwhile (alerts,
// key updates).
func (t *tlsConn) seal(b []byte) []byte {
	if len(b) > 0 {
		_, _ = t.tc.Write(b)
	}
	return t.p.takeOut()
}

// tlsPipe is the net.Conn under a tls.Conn: the TCP socket during the
// handshake, then memory the loop fills and drains.
type tlsPipe struct {
	raw          net.Conn // during the handshake; nil after
	w            net.Conn // a replica's socket: sealed bytes go straight to it
	in           []byte   // ciphertext the loop read, not yet taken
	out          []byte   // ciphertext sealed, not yet written
	laddr, raddr net.Addr
}

type wouldBlock struct{}

func (wouldBlock) Error() string   { return "tls bridge: no more input" }
func (wouldBlock) Timeout() bool   { return true }
func (wouldBlock) Temporary() bool { return true }

// errWouldBlock is a temporary net.Error: tls.Conn returns it from Read
// without keeping it as the connection's failure.
var errWouldBlock net.Error = wouldBlock{}

func (p *tlsPipe) Read(b []byte) (int, error) {
	if p.raw != nil {
		return p.raw.Read(b)
	}
	if len(p.in) == 0 {
		return 0, errWouldBlock
	}
	n := copy(b, p.in)
	p.in = p.in[n:]
	return n, nil
}

func (p *tlsPipe) Write(b []byte) (int, error) {
	if p.raw != nil {
		return p.raw.Write(b)
	}
	if p.w != nil {
		return p.w.Write(b)
	}
	p.out = append(p.out, b...)
	return len(b), nil
}

func (p *tlsPipe) takeOut() []byte {
	out := p.out
	if cap(p.out) > 256<<10 {
		p.out = nil
	} else {
		p.out = p.out[:0]
	}
	return out
}

func (p *tlsPipe) Close() error {
	if p.raw != nil {
		return p.raw.Close()
	}
	if p.w != nil {
		return p.w.Close()
	}
	return nil
}
func (p *tlsPipe) LocalAddr() net.Addr  { return p.laddr }
func (p *tlsPipe) RemoteAddr() net.Addr { return p.raddr }
func (p *tlsPipe) SetDeadline(t time.Time) error {
	if p.raw != nil {
		return p.raw.SetDeadline(t)
	}
	return nil
}
func (p *tlsPipe) SetReadDeadline(t time.Time) error {
	if p.raw != nil {
		return p.raw.SetReadDeadline(t)
	}
	return nil
}
func (p *tlsPipe) SetWriteDeadline(t time.Time) error {
	if p.raw != nil {
		return p.raw.SetWriteDeadline(t)
	}
	if p.w != nil {
		return p.w.SetWriteDeadline(t)
	}
	return nil
}

// send writes b to the client's socket, sealed for a TLS client (the
// replies of writeOut and the errors of admission).
func (cl *Client) send(b []byte) {
	if cl.tls != nil {
		b = cl.tls.seal(b)
	}
	if len(b) > 0 {
		_, _ = cl.c.Write(b)
	}
}

// writeTo makes the session write straight to w, the replica's own socket
// (repl_master.go's sender writes the stream from its goroutine; the loop
// still reads the replica's acks through the session: tls.Conn reads and
// writes under separate locks). It returns the net.Conn to write to.
func (t *tlsConn) writeTo(w net.Conn) net.Conn {
	if out := t.p.takeOut(); len(out) > 0 {
		_, _ = w.Write(out)
	}
	t.p.w = w
	return t.tc
}

// tlsDial runs the client side of a TLS handshake on conn, to the master
// host (tls-replication), under timeout.
func (srv *Server) tlsDial(conn net.Conn, host string, timeout time.Duration) (net.Conn, error) {
	cfg := srv.tls.client.Load()
	if cfg == nil {
		conn.Close()
		return nil, errors.New("TLS is not configured")
	}
	// As Redis: the master's chain is verified against the CAs, its
	// name is not (replicaof often names an IP the certificate lacks).
	cfg = cfg.Clone()
	cfg.ServerName = host
	roots := cfg.RootCAs
	cfg.InsecureSkipVerify = true
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("the master sent no certificate")
		}
		inter := x509.NewCertPool()
		for _, c := range cs.PeerCertificates[1:] {
			inter.AddCert(c)
		}
		_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
		return err
	}
	tc := tls.Client(conn, cfg)
	_ = conn.SetDeadline(time.Now().Add(timeout))
	if err := tc.Handshake(); err != nil {
		conn.Close()
		return nil, err
	}
	_ = conn.SetDeadline(time.Time{})
	return tc, nil
}
