package conf

import (
	"bytes"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"os"
	"strings"

	"github.com/cockroachdb/errors"
	"software.sslmate.com/src/go-pkcs12"
)

// The admin server's TLS (httpServerTlsEnable): upstream's Vert.x server
// reads a key store and a trust store, both Java key stores, and requires
// a client certificate (ClientAuth.REQUIRED) whenever TLS is on. Java has
// written PKCS#12 key stores by default since Java 9, and its JKS reader
// reads them too; bookie-index reads PKCS#12 only (go-pkcs12: the legacy
// RC2/3DES encryption of OpenSSL 1.x and older Java, and the
// PBES2/AES-256 of OpenSSL 3 and Java 17+) and refuses a JKS store with
// the command that converts it.

// Magic numbers of the Java key store formats PKCS#12 replaced.
const (
	jksMagic   = 0xFEEDFEED
	jceksMagic = 0xCECECECE
)

// The errors of a TLS configuration without its stores.
var (
	errNoKeyStore = errors.New("httpServerKeyStorePath: empty, but httpServerTlsEnable=true needs a PKCS#12 key store " +
		"holding the admin server's private key and certificate")
	errNoTrustStore = errors.New("httpServerTrustStorePath: empty, but httpServerTlsEnable=true requires client certificates, " +
		"as BookKeeper's admin server does (without a trust store it accepts no client), and this PKCS#12 trust store " +
		"holds the certificates that issue them")
)

// AdminTLSConfig returns the admin server's TLS configuration: the key and
// certificate chain of httpServerKeyStorePath, TLS 1.2 at least, and
// client certificates required and verified against the certificates of
// httpServerTrustStorePath. Errors name the key and the file.
func (c *Config) AdminTLSConfig() (*tls.Config, error) {
	if c.HTTPServerKeyStorePath == "" {
		return nil, errNoKeyStore
	}
	if c.HTTPServerTrustStorePath == "" {
		return nil, errNoTrustStore
	}
	cert, err := loadKeyStore(c.HTTPServerKeyStorePath, c.HTTPServerKeyStorePassword)
	if err != nil {
		return nil, err
	}
	passwords := []string{c.HTTPServerTrustStorePassword}
	if c.HTTPServerTrustStorePassword == "" && c.HTTPServerKeyStorePassword != "" {
		// Upstream's getHttpServerTrustStorePassword falls back to the
		// key store's password.
		passwords = append(passwords, c.HTTPServerKeyStorePassword)
	}
	pool, err := loadTrustStore(c.HTTPServerTrustStorePath, passwords)
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    pool,
	}, nil
}

// readStore reads a PKCS#12 file for key, refusing the formats it is not
// with what to do instead.
func readStore(key, path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, errors.Wrapf(err, "%s: reading %q", key, path)
	}
	if len(data) >= 4 {
		switch binary.BigEndian.Uint32(data) {
		case jksMagic, jceksMagic:
			kind := "JKS"
			if binary.BigEndian.Uint32(data) == jceksMagic {
				kind = "JCEKS"
			}
			return nil, errors.Newf("%s: %q is a %s key store, which bookie-index does not read; convert it to PKCS#12 "+
				"(keytool -importkeystore -srckeystore %s -destkeystore %s.p12 -deststoretype pkcs12) and point %s at the new file",
				key, path, kind, path, path, key)
		}
	}
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte("-----BEGIN")) {
		return nil, errors.Newf("%s: %q is PEM, not a PKCS#12 store; make one with openssl pkcs12 -export "+
			"(a key store: -inkey key.pem -in cert.pem; a trust store: keytool -importcert -storetype pkcs12)", key, path)
	}
	return data, nil
}

// loadKeyStore reads the admin server's key and certificate chain: one
// private key and the certificate that matches it, the other
// certificates being its chain.
func loadKeyStore(path, password string) (tls.Certificate, error) {
	const key = "httpServerKeyStorePath"
	data, err := readStore(key, path)
	if err != nil {
		return tls.Certificate{}, err
	}
	priv, first, rest, err := pkcs12.DecodeChain(data, password)
	if err != nil {
		return tls.Certificate{}, storeError(key, "httpServerKeyStorePassword", path, err)
	}
	signer, ok := priv.(crypto.Signer)
	if !ok {
		return tls.Certificate{}, errors.Newf("%s: %q: the private key (%T) cannot sign", key, path, priv)
	}
	type publicKey interface{ Equal(crypto.PublicKey) bool }
	pub, ok := signer.Public().(publicKey)
	if !ok {
		return tls.Certificate{}, errors.Newf("%s: %q: unsupported private key type %T", key, path, priv)
	}
	all := append([]*x509.Certificate{first}, rest...)
	leaf := -1
	for i, c := range all {
		if pub.Equal(c.PublicKey) {
			leaf = i
			break
		}
	}
	if leaf < 0 {
		return tls.Certificate{}, errors.Newf("%s: %q: none of its %d certificates is the private key's", key, path, len(all))
	}
	cert := tls.Certificate{PrivateKey: priv, Leaf: all[leaf]}
	cert.Certificate = append(cert.Certificate, all[leaf].Raw)
	for i, c := range all {
		if i != leaf {
			cert.Certificate = append(cert.Certificate, c.Raw)
		}
	}
	return cert, nil
}

// loadTrustStore reads the certificates that issue client certificates:
// a PKCS#12 trust store, whose certificates Java marks as trusted
// (keytool -importcert does; openssl pkcs12 -export does only with
// -jdktrust, since OpenSSL 3.2). A store holding a private key is not a
// trust store. Each password is tried in turn.
func loadTrustStore(path string, passwords []string) (*x509.CertPool, error) {
	const key = "httpServerTrustStorePath"
	data, err := readStore(key, path)
	if err != nil {
		return nil, err
	}
	var certs []*x509.Certificate
	var pw string
	for _, pw = range passwords {
		if certs, err = pkcs12.DecodeTrustStore(data, pw); !errors.Is(err, pkcs12.ErrIncorrectPassword) {
			break
		}
	}
	if err != nil {
		if _, _, _, keyErr := pkcs12.DecodeChain(data, pw); keyErr == nil {
			return nil, errors.Newf("%s: %q holds a private key: a trust store holds only the certificates that issue client certificates", key, path)
		}
		return nil, storeError(key, "httpServerTrustStorePassword", path, err)
	}
	if len(certs) == 0 {
		return nil, errors.Newf("%s: %q holds no certificate: no client certificate could be verified", key, path)
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, nil
}

// storeError says what a PKCS#12 decoding error means for the operator.
func storeError(key, passwordKey, path string, err error) error {
	msg := err.Error()
	switch {
	case errors.Is(err, pkcs12.ErrIncorrectPassword):
		return errors.Newf("%s: %q: wrong password (%s)", key, path, passwordKey)
	case strings.Contains(msg, "not marked as trusted"):
		return errors.Newf("%s: %q: its certificates are not marked as trusted, as Java marks a trust store's; "+
			"make it with keytool -importcert -storetype pkcs12 (or openssl pkcs12 -export -nokeys -jdktrust anyExtendedKeyUsage, OpenSSL 3.2+)", key, path)
	case strings.Contains(msg, "expected exactly one key bag"):
		return errors.Newf("%s: %q holds more than one private key; the key store must hold the admin server's one key and its certificate chain", key, path)
	}
	return errors.Wrapf(err, "%s: %q is not a PKCS#12 store bookie-index can read", key, path)
}
