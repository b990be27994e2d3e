package main

// The tls group: SET and GET over TLS with client certificates (mutual
// TLS), redshard's tls-port against redis-server's, same certificates,
// same redis-benchmark --tls. redshard runs at --shards 1 (one loop, as
// redis-server's one thread) and at its default shards.

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

func (h *harness) tlsGroup() {
	r := h.res
	r.sec("tls: redis-benchmark --tls with a client certificate (-c 50 -r 1000000 -d 100), TLS 1.3, RSA 2048 certificates")
	type figs struct{ thr, cpu *figure }
	type tlsMode struct {
		label  string
		shards int
	}
	modes := []tlsMode{{"--shards 1", 1}, {"default shards", 0}}
	tests := []struct{ test, label string }{{"set", "SET"}, {"get", "GET"}}
	fs := map[string]*figs{}
	key := func(m, t string, P int) string { return fmt.Sprintf("%s/%s/%d", m, t, P) }
	for _, m := range modes {
		for _, t := range tests {
			for _, P := range []int{1, 16} {
				fs[key(m.label, t.test, P)] = &figs{
					thr: r.fig(fmt.Sprintf("TLS %s -P %d, redshard %s", t.label, P, m.label), fOps, ">=", 1.0),
					cpu: r.fig(fmt.Sprintf("TLS %s -P %d CPU/op, redshard %s", t.label, P, m.label), fMicros, "<=", 1.0),
				}
			}
		}
	}
	failAll := func(k int, why string) {
		for _, f := range fs {
			f.thr.fail(k, why)
			f.cpu.fail(k, why)
		}
	}
	dir := h.mkdir("tls-certs")
	certs, err := makeBenchCerts(dir)
	if err != nil {
		h.logf("tls: certificates: %v", err)
		failAll(rs, "n/a (certificates)")
		failAll(rd, "n/a (certificates)")
		return
	}
	r.note("tls: both servers get `--tls-port P --tls-cert-file --tls-key-file --tls-ca-cert-file` (tls-auth-clients yes, the default) and keep a plaintext port for the harness; redis-benchmark runs with `--tls --cacert --cert --key`. The redis-server figures are the same runs for both redshard rows. Each side negotiates with its own defaults: OpenSSL's redis-benchmark offers TLS_AES_256_GCM_SHA384 first, which redis-server (OpenSSL) picks; Go's server picks TLS_AES_128_GCM_SHA256 on AES hardware.")
	benchArgs := []string{"--tls", "--cacert", certs.ca, "--cert", certs.cert, "--key", certs.key}
	start := func(kind, shards int) (*server, int, error) {
		port, err := freePort()
		if err != nil {
			return nil, 0, err
		}
		s, err := h.startServer(kind, srvOpts{shards: shards, extra: []string{"--tls-port", strconv.Itoa(port),
			"--tls-cert-file", certs.cert, "--tls-key-file", certs.key, "--tls-ca-cert-file", certs.ca}})
		return s, port, err
	}
	rdSrv, rdPort, err := start(rd, 0)
	if err != nil {
		h.logf("tls: redis-server: %v", err)
		failAll(rd, "n/a (server failed)")
	} else {
		defer rdSrv.stop()
	}
	type rsRun struct {
		s    *server
		port int
	}
	rsSrv := map[string]rsRun{}
	for _, m := range modes {
		s, port, err := start(rs, m.shards)
		if err != nil {
			h.logf("tls: redshard %s: %v", m.label, err)
			for _, t := range tests {
				for _, P := range []int{1, 16} {
					fs[key(m.label, t.test, P)].thr.fail(rs, "n/a (server failed)")
					fs[key(m.label, t.test, P)].cpu.fail(rs, "n/a (server failed)")
				}
			}
			continue
		}
		defer s.stop()
		rsSrv[m.label] = rsRun{s, port}
	}
	for round := 0; round < h.opt.rounds; round++ {
		for _, t := range tests {
			for _, P := range []int{1, 16} {
				n := h.sz.p1
				if P > 1 {
					n = h.sz.p16
				}
				spec := benchSpec{tests: t.test, n: n, pipe: P, rnd: 1000000, data: 100, csv: true, extra: benchArgs}
				runRS := func(m tlsMode) {
					run, ok := rsSrv[m.label]
					if !ok {
						return
					}
					spec.port = run.port
					res, err := h.runBench(run.s, spec)
					f := fs[key(m.label, t.test, P)]
					if err != nil {
						h.logf("tls %s -P %d redshard %s: %v", t.label, P, m.label, err)
						f.thr.fail(rs, naReason(err))
						f.cpu.fail(rs, naReason(err))
						return
					}
					f.thr.add(rs, res.rps)
					f.cpu.add(rs, res.cpuPerOp)
					h.logf("%s TLS %-3s -P %-2d redshard %-14s %s  %.2f µs CPU/op", h.roundsLabel(round), t.label, P, m.label,
						format(fOps, res.rps), res.cpuPerOp*1e6)
				}
				runRedis := func() {
					if rdSrv == nil {
						return
					}
					spec.port = rdPort
					res, err := h.runBench(rdSrv, spec)
					if err != nil {
						h.logf("tls %s -P %d redis: %v", t.label, P, err)
						for _, m := range modes {
							fs[key(m.label, t.test, P)].thr.fail(rd, naReason(err))
							fs[key(m.label, t.test, P)].cpu.fail(rd, naReason(err))
						}
						return
					}
					for _, m := range modes {
						fs[key(m.label, t.test, P)].thr.add(rd, res.rps)
						fs[key(m.label, t.test, P)].cpu.add(rd, res.cpuPerOp)
					}
					h.logf("%s TLS %-3s -P %-2d redis    %-14s %s  %.2f µs CPU/op", h.roundsLabel(round), t.label, P, "",
						format(fOps, res.rps), res.cpuPerOp*1e6)
				}
				// Alternate: redshard's modes, then redis-server; in odd
				// rounds the other way round, so that a machine speeding
				// up or slowing down within a round favours neither.
				if round%2 == 0 {
					for _, m := range modes {
						runRS(m)
					}
					runRedis()
				} else {
					runRedis()
					for i := len(modes) - 1; i >= 0; i-- {
						runRS(modes[i])
					}
				}
			}
		}
	}
}

type benchCerts struct{ ca, cert, key string }

// makeBenchCerts writes a CA and one certificate signed by it (for the
// servers and the client alike: 127.0.0.1, server and client auth), RSA
// 2048 as Redis's utils/gen-test-certs.sh makes them.
func makeBenchCerts(dir string) (benchCerts, error) {
	var c benchCerts
	caKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return c, err
	}
	caT := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "bench CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(7 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caT, caT, &caKey.PublicKey, caKey)
	if err != nil {
		return c, err
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return c, err
	}
	leafT := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "bench"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(7 * 24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"}}
	der, err := x509.CreateCertificate(rand.Reader, leafT, ca, &key.PublicKey, caKey)
	if err != nil {
		return c, err
	}
	write := func(name, typ string, b []byte) (string, error) {
		p := filepath.Join(dir, name)
		return p, os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600)
	}
	if c.ca, err = write("ca.crt", "CERTIFICATE", caDER); err != nil {
		return c, err
	}
	if c.cert, err = write("bench.crt", "CERTIFICATE", der); err != nil {
		return c, err
	}
	c.key, err = write("bench.key", "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(key))
	return c, err
}
