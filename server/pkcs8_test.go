package server

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func pemBytes(t testing.TB, path, typ string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != typ {
		t.Fatalf("%s: no %s block", path, typ)
	}
	return blk.Bytes
}

// The fixed vector (testdata/pkcs8, written by OpenSSL 3.0: `openssl pkcs8
// -topk8 -v2 aes-256-cbc -v2prf hmacWithSHA256 -passout pass:redshard`)
// decrypts to the plain key; a wrong password, PBES1 and scrypt give their
// clear errors.
func TestDecryptPKCS8Vector(t *testing.T) {
	plain := pemBytes(t, "testdata/pkcs8/plain.pem", "PRIVATE KEY")
	enc := pemBytes(t, "testdata/pkcs8/aes256-sha256-pass-redshard.pem", "ENCRYPTED PRIVATE KEY")
	got, err := decryptPKCS8(enc, []byte("redshard"))
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("decrypt: %v (equal %v)", err, bytes.Equal(got, plain))
	}
	for _, pass := range []string{"redshard2", "", "Redshard"} {
		if _, err := decryptPKCS8(enc, []byte(pass)); err != errPKCS8Password {
			t.Errorf("password %q: %v, want the wrong-password error", pass, err)
		}
	}
	for file, want := range map[string]string{
		"pbes1-sha1-3des.pem": "PBES1 encryption (1.2.840.113549.1.12.1.3) is not supported",
		"scrypt-aes256.pem":   "the scrypt key derivation is not supported",
	} {
		_, err := decryptPKCS8(pemBytes(t, "testdata/pkcs8/"+file, "ENCRYPTED PRIVATE KEY"), []byte("x"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", file, err, want)
		}
	}
}

// Keys OpenSSL encrypts now, with each PRF and cipher, decrypt to the key
// it was given.
func TestDecryptPKCS8OpenSSL(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl not installed")
	}
	dir := t.TempDir()
	plainFile := filepath.Join(dir, "plain.pem")
	if out, err := exec.Command("openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", plainFile).CombinedOutput(); err != nil {
		t.Fatalf("openssl genpkey: %v: %s", err, out)
	}
	plain := pemBytes(t, plainFile, "PRIVATE KEY")
	cases := [][]string{
		{"-v2", "aes-128-cbc", "-v2prf", "hmacWithSHA1"},
		{"-v2", "aes-192-cbc", "-v2prf", "hmacWithSHA224"},
		{"-v2", "aes-256-cbc"}, // OpenSSL 3's default PRF, hmacWithSHA256
		{"-v2", "aes-256-cbc", "-v2prf", "hmacWithSHA384"},
		{"-v2", "aes-128-cbc", "-v2prf", "hmacWithSHA512", "-iter", "10000"},
		{"-v2", "des3"},
	}
	for i, c := range cases {
		file := filepath.Join(dir, "enc.pem")
		args := append([]string{"pkcs8", "-topk8", "-in", plainFile, "-passout", "pass:p" + c[1], "-out", file}, c...)
		if out, err := exec.Command("openssl", args...).CombinedOutput(); err != nil {
			t.Fatalf("openssl %v: %v: %s", args, err, out)
		}
		got, err := decryptPKCS8(pemBytes(t, file, "ENCRYPTED PRIVATE KEY"), []byte("p"+c[1]))
		if err != nil || !bytes.Equal(got, plain) {
			t.Errorf("case %d %v: %v", i, c, err)
		}
	}
	// What `openssl genpkey -aes256` writes, as the brief of
	// tls-key-file-pass has it.
	file := filepath.Join(dir, "genpkey.pem")
	if out, err := exec.Command("openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024", "-aes256", "-pass", "pass:x", "-out", file).CombinedOutput(); err != nil {
		t.Fatalf("openssl genpkey -aes256: %v: %s", err, out)
	}
	der, err := decryptPKCS8(pemBytes(t, file, "ENCRYPTED PRIVATE KEY"), []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x509.ParsePKCS8PrivateKey(der); err != nil {
		t.Fatal(err)
	}
}

// tls-key-file with tls-key-file-pass loads an encrypted PKCS#8 key with
// its certificate; without the password, or with a wrong one, the error
// names the file and the cause.
func TestLoadKeyPairEncryptedPKCS8(t *testing.T) {
	dir := t.TempDir()
	keyDER := pemBytes(t, "testdata/pkcs8/plain.pem", "PRIVATE KEY")
	k, err := x509.ParsePKCS8PrivateKey(keyDER)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "redshard"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	certDER, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, k.(*ecdsa.PrivateKey).Public(), k)
	if err != nil {
		t.Fatal(err)
	}
	certFile := filepath.Join(dir, "cert.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: certDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	keyFile := "testdata/pkcs8/aes256-sha256-pass-redshard.pem"
	cert, err := loadKeyPair(certFile, keyFile, "redshard")
	if err != nil {
		t.Fatal(err)
	}
	if pk, ok := cert.PrivateKey.(*ecdsa.PrivateKey); !ok || pk.Curve != elliptic.P256() {
		t.Fatalf("key %T", cert.PrivateKey)
	}
	for pass, want := range map[string]string{
		"":      "the key is encrypted and tls-key-file-pass is not set",
		"wrong": "wrong tls-key-file-pass",
	} {
		if _, err := loadKeyPair(certFile, keyFile, pass); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), keyFile) {
			t.Errorf("pass %q: %v, want %q", pass, err, want)
		}
	}
}

// FuzzDecryptPKCS8: any DER gives a key or an error, never a panic.
// (Iterations are bounded low so that the fuzzer explores the parse.)
func FuzzDecryptPKCS8(f *testing.F) {
	for _, file := range []string{"aes256-sha256-pass-redshard.pem", "pbes1-sha1-3des.pem", "scrypt-aes256.pem"} {
		b, err := os.ReadFile("testdata/pkcs8/" + file)
		if err != nil {
			f.Fatal(err)
		}
		blk, _ := pem.Decode(b)
		f.Add(blk.Bytes, "redshard")
	}
	f.Fuzz(func(t *testing.T, der []byte, pass string) {
		out, err := decryptPKCS8Limit(der, []byte(pass), 4096)
		if err == nil {
			if _, perr := x509.ParsePKCS8PrivateKey(out); perr != nil {
				t.Fatalf("decrypted to a key that does not parse: %v", perr)
			}
		}
	})
}
