package server

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTLSProtocolsMapToAVersionRange(t *testing.T) {
	for _, tc := range []struct {
		in       string
		min, max uint16
		err      string
	}{
		{"", tls.VersionTLS12, tls.VersionTLS13, ""},
		{"TLSv1.2", tls.VersionTLS12, tls.VersionTLS12, ""},
		{"tlsv1.3", tls.VersionTLS13, tls.VersionTLS13, ""},
		{"TLSv1.2 TLSv1.3", tls.VersionTLS12, tls.VersionTLS13, ""},
		{"TLSv1 TLSv1.1", tls.VersionTLS10, tls.VersionTLS11, ""},
		{"SSLv3", 0, 0, "Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'."},
	} {
		lo, hi, err := parseTLSProtocols(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("tls-protocols %q: err %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || lo != tc.min || hi != tc.max {
			t.Errorf("tls-protocols %q = %x..%x, %v; want %x..%x", tc.in, lo, hi, err, tc.min, tc.max)
		}
	}
}

func TestTLSCiphersMapOpenSSLNames(t *testing.T) {
	got, err := parseTLSCiphers("ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-CHACHA20-POLY1305:!aNULL")
	if err != nil || len(got) != 2 || got[0] != tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 ||
		got[1] != tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256 {
		t.Fatalf("parseTLSCiphers = %v, %v", got, err)
	}
	if got, err := parseTLSCiphers("DEFAULT"); err != nil || got != nil {
		t.Fatalf("DEFAULT = %v, %v; want Go's defaults (nil)", got, err)
	}
	if _, err := parseTLSCiphers("DHE-RSA-AES256-GCM-SHA384"); err == nil ||
		!strings.Contains(err.Error(), `"DHE-RSA-AES256-GCM-SHA384" is not supported by Go's crypto/tls`) {
		t.Fatalf("a cipher Go lacks: err %v", err)
	}
	if err := checkTLS13Suites("TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"); err != nil {
		t.Fatalf("Go's TLS 1.3 suites refused: %v", err)
	}
	if err := checkTLS13Suites("TLS_AES_128_CCM_SHA256"); err == nil {
		t.Fatal("TLS_AES_128_CCM_SHA256 (which Go lacks) accepted")
	}
}

// A malformed encrypted PKCS#8 key is refused with the file and the cause.
func TestTLSMalformedEncryptedPKCS8KeyIsRefusedClearly(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "k.pem")
	if err := os.WriteFile(key, []byte("-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cert := filepath.Join(dir, "c.pem")
	if err := os.WriteFile(cert, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := loadKeyPair(cert, key, "pass")
	if err == nil || !strings.Contains(err.Error(), "malformed encrypted PKCS#8 key") || !strings.Contains(err.Error(), key) {
		t.Fatalf("encrypted PKCS#8 key: err %v", err)
	}
}
