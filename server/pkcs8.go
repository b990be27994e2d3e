package server

// Encrypted PKCS#8 private keys ("-----BEGIN ENCRYPTED PRIVATE KEY-----",
// what OpenSSL 3 writes for `openssl genpkey -aes256` and `openssl pkcs8
// -topk8 -v2 aes-256-cbc`), for tls-key-file with tls-key-file-pass. Go's
// crypto/x509 reads only unencrypted PKCS#8, so PBES2 (RFC 8018 §6.2) is
// decoded here: PBKDF2 with an HMAC-SHA1/224/256/384/512 PRF, then
// AES-128/192/256-CBC or DES-EDE3-CBC. PBES1 and scrypt, which OpenSSL only
// writes when asked, are refused by name.
//
// The DER comes from a file an operator names, yet any bytes must give an
// error and never a panic (FuzzDecryptPKCS8), and an iteration count is
// bounded so a crafted file can't hold the server in PBKDF2.

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/pbkdf2"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"
	"hash"
)

// pbkdf2MaxIter bounds PBKDF2's iteration count: OpenSSL writes 2048 (its
// default) and tools that raise it stay far below this.
const pbkdf2MaxIter = 10_000_000

var (
	oidPBES2  = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidPBKDF2 = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}
	oidScrypt = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 11591, 4, 11}
	// PBES1 (RFC 8018 §6.1) and PKCS#12's PBE: pbeWith... under
	// 1.2.840.113549.1.5 and 1.2.840.113549.1.12.1.
	oidPKCS5  = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5}
	oidPKCS12 = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 1}

	oidHMACSHA1   = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 7}
	oidHMACSHA224 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 8}
	oidHMACSHA256 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 9}
	oidHMACSHA384 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 10}
	oidHMACSHA512 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 11}

	oidAES128CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 2}
	oidAES192CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 22}
	oidAES256CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 42}
	oidDESEDE3CBC = asn1.ObjectIdentifier{1, 2, 840, 113549, 3, 7}
)

// errPKCS8Password is the answer to a wrong tls-key-file-pass (CBC can only
// tell it by the padding and the key that comes out).
var errPKCS8Password = errors.New("can't decrypt the encrypted PKCS#8 key: wrong tls-key-file-pass, or a corrupted key")

type encryptedPrivateKeyInfo struct {
	Algo pkix.AlgorithmIdentifier
	Data []byte
}

type pbes2Params struct {
	KDF pkix.AlgorithmIdentifier
	Enc pkix.AlgorithmIdentifier
}

type pbkdf2Params struct {
	Salt      []byte
	Iter      int
	KeyLength int                      `asn1:"optional"`
	PRF       pkix.AlgorithmIdentifier `asn1:"optional"`
}

// decryptPKCS8 returns the PrivateKeyInfo DER ("PRIVATE KEY") inside an
// EncryptedPrivateKeyInfo DER.
func decryptPKCS8(der, pass []byte) ([]byte, error) {
	return decryptPKCS8Limit(der, pass, pbkdf2MaxIter)
}

func decryptPKCS8Limit(der, pass []byte, maxIter int) ([]byte, error) {
	var epki encryptedPrivateKeyInfo
	if rest, err := asn1.Unmarshal(der, &epki); err != nil {
		return nil, fmt.Errorf("malformed encrypted PKCS#8 key: %v", err)
	} else if len(rest) > 0 {
		return nil, errors.New("malformed encrypted PKCS#8 key: trailing data")
	}
	algo := epki.Algo.Algorithm
	switch {
	case algo.Equal(oidPBES2):
	case hasPrefixOID(algo, oidPKCS5) || hasPrefixOID(algo, oidPKCS12):
		return nil, fmt.Errorf("encrypted PKCS#8 key: PBES1 encryption (%s) is not supported; re-encrypt it with PBES2 (openssl pkcs8 -topk8 -v2 aes-256-cbc)", algo)
	default:
		return nil, fmt.Errorf("encrypted PKCS#8 key: encryption algorithm %s is not supported", algo)
	}
	var p pbes2Params
	if rest, err := asn1.Unmarshal(epki.Algo.Parameters.FullBytes, &p); err != nil || len(rest) > 0 {
		return nil, errors.New("malformed encrypted PKCS#8 key: bad PBES2 parameters")
	}
	if p.KDF.Algorithm.Equal(oidScrypt) {
		return nil, errors.New("encrypted PKCS#8 key: the scrypt key derivation is not supported; re-encrypt it with PBKDF2 (openssl pkcs8 -topk8 -v2 aes-256-cbc)")
	}
	if !p.KDF.Algorithm.Equal(oidPBKDF2) {
		return nil, fmt.Errorf("encrypted PKCS#8 key: key derivation %s is not supported", p.KDF.Algorithm)
	}
	var kp pbkdf2Params
	if rest, err := asn1.Unmarshal(p.KDF.Parameters.FullBytes, &kp); err != nil || len(rest) > 0 {
		return nil, errors.New("malformed encrypted PKCS#8 key: bad PBKDF2 parameters")
	}
	if kp.Iter < 1 || kp.Iter > maxIter {
		return nil, fmt.Errorf("encrypted PKCS#8 key: PBKDF2 iteration count %d out of range (1 to %d)", kp.Iter, maxIter)
	}
	var prf func() hash.Hash
	switch a := kp.PRF.Algorithm; {
	case len(a) == 0 || a.Equal(oidHMACSHA1): // DEFAULT hmacWithSHA1
		prf = sha1.New
	case a.Equal(oidHMACSHA224):
		prf = sha256.New224
	case a.Equal(oidHMACSHA256):
		prf = sha256.New
	case a.Equal(oidHMACSHA384):
		prf = sha512.New384
	case a.Equal(oidHMACSHA512):
		prf = sha512.New
	default:
		return nil, fmt.Errorf("encrypted PKCS#8 key: PBKDF2 PRF %s is not supported", a)
	}
	var keyLen int
	var newBlock func([]byte) (cipher.Block, error)
	switch e := p.Enc.Algorithm; {
	case e.Equal(oidAES128CBC):
		keyLen, newBlock = 16, aes.NewCipher
	case e.Equal(oidAES192CBC):
		keyLen, newBlock = 24, aes.NewCipher
	case e.Equal(oidAES256CBC):
		keyLen, newBlock = 32, aes.NewCipher
	case e.Equal(oidDESEDE3CBC):
		keyLen, newBlock = 24, des.NewTripleDESCipher
	default:
		return nil, fmt.Errorf("encrypted PKCS#8 key: cipher %s is not supported", e)
	}
	if kp.KeyLength != 0 && kp.KeyLength != keyLen {
		return nil, errors.New("malformed encrypted PKCS#8 key: PBKDF2 key length does not fit the cipher")
	}
	var iv []byte
	if rest, err := asn1.Unmarshal(p.Enc.Parameters.FullBytes, &iv); err != nil || len(rest) > 0 {
		return nil, errors.New("malformed encrypted PKCS#8 key: bad cipher IV")
	}
	key, err := pbkdf2.Key(prf, string(pass), kp.Salt, kp.Iter, keyLen)
	if err != nil {
		return nil, fmt.Errorf("encrypted PKCS#8 key: %v", err)
	}
	block, err := newBlock(key)
	if err != nil {
		return nil, fmt.Errorf("encrypted PKCS#8 key: %v", err)
	}
	bs := block.BlockSize()
	if len(iv) != bs {
		return nil, errors.New("malformed encrypted PKCS#8 key: bad cipher IV length")
	}
	if len(epki.Data) == 0 || len(epki.Data)%bs != 0 {
		return nil, errors.New("malformed encrypted PKCS#8 key: encrypted data is not whole blocks")
	}
	out := make([]byte, len(epki.Data))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(out, epki.Data)
	// PKCS#7 padding: 1 to bs bytes, each its count. A wrong password
	// fails here, or (1 in ~256) in the parse below.
	n := int(out[len(out)-1])
	if n < 1 || n > bs {
		return nil, errPKCS8Password
	}
	for _, b := range out[len(out)-n:] {
		if int(b) != n {
			return nil, errPKCS8Password
		}
	}
	out = out[:len(out)-n]
	if _, err := x509.ParsePKCS8PrivateKey(out); err != nil {
		return nil, errPKCS8Password
	}
	return out, nil
}

func hasPrefixOID(o, prefix asn1.ObjectIdentifier) bool {
	return len(o) > len(prefix) && o[:len(prefix)].Equal(prefix)
}
