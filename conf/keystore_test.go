package conf

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The fixtures of testdata/tls (gen.sh made them): a CA, the server's and
// a client's certificates it issued, the server's key store in three
// encryptions, a trust store holding the CA. Password "changeit".
const testStorePassword = "changeit"

func tlsFixture(name string) string { return filepath.Join("testdata", "tls", name) }

// tlsConfig loads a configuration with TLS on and the given stores.
func tlsConfig(t *testing.T, keyStore, trustStore string, extra map[string]string) (*Config, error) {
	t.Helper()
	set := map[string]string{
		"httpServerTlsEnable": "true", "httpServerKeyStorePath": keyStore, "httpServerKeyStorePassword": testStorePassword,
		"httpServerTrustStorePath": trustStore, "httpServerTrustStorePassword": testStorePassword,
	}
	for k, v := range extra {
		set[k] = v
	}
	return Load(LoadOptions{Overrides: set})
}

// TestKeyStoreEncryptions: the server's key store is read in OpenSSL 3's
// default encryption (PBES2, AES-256, PBKDF2 with HMAC-SHA256), OpenSSL
// 1.x's (-legacy: RC2-40 and 3DES, a SHA-1 MAC) and Java 17 keytool's;
// the leaf comes first, its chain after it; a client with a certificate
// the trust store's CA issued is served, one without is refused.
func TestKeyStoreEncryptions(t *testing.T) {
	for _, store := range []string{"server-aes.p12", "server-legacy.p12", "server-java.p12"} {
		t.Run(store, func(t *testing.T) {
			c, err := tlsConfig(t, tlsFixture(store), tlsFixture("truststore.p12"), nil)
			require.NoError(t, err)
			cfg, err := c.AdminTLSConfig()
			require.NoError(t, err)
			require.Len(t, cfg.Certificates, 1)
			cert := cfg.Certificates[0]
			require.Equal(t, "server", cert.Leaf.Subject.CommonName)
			require.Len(t, cert.Certificate, 2, "the leaf and the CA")
			require.Equal(t, tls.RequireAndVerifyClientCert, cfg.ClientAuth)
			checkHandshakes(t, cfg)
		})
	}
}

// checkHandshakes serves cfg and checks that a client with a certificate
// is served and one without is refused.
func checkHandshakes(t *testing.T, cfg *tls.Config) {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello %s", r.TLS.PeerCertificates[0].Subject.CommonName)
	}))
	srv.TLS = cfg
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake
	srv.StartTLS()
	defer srv.Close()

	roots := x509.NewCertPool()
	caPEM, err := os.ReadFile(tlsFixture("ca.pem"))
	require.NoError(t, err)
	require.True(t, roots.AppendCertsFromPEM(caPEM))
	clientCert, err := tls.LoadX509KeyPair(tlsFixture("client.pem"), tlsFixture("client.key"))
	require.NoError(t, err)

	get := func(certs []tls.Certificate) (string, error) {
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: certs}}}
		defer client.CloseIdleConnections()
		resp, err := client.Get(srv.URL)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return string(body), err
	}
	body, err := get([]tls.Certificate{clientCert})
	require.NoError(t, err)
	require.Equal(t, "hello client", body)
	_, err = get(nil)
	require.Error(t, err, "a client without a certificate is refused")
}

// TestKeyStoreMadeByOpenSSL: a key store and client certificate made by
// the openssl command of this machine, in its default encryption.
func TestKeyStoreMadeByOpenSSL(t *testing.T) {
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("no openssl command")
	}
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(openssl, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "openssl %v: %s", args, out)
	}
	run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "key.pem", "-out", "cert.pem", "-days", "2", "-subj", "/CN=localhost")
	run("pkcs12", "-export", "-inkey", "key.pem", "-in", "cert.pem", "-passout", "pass:s3cret", "-out", "server.p12")
	c, err := tlsConfig(t, filepath.Join(dir, "server.p12"), tlsFixture("truststore.p12"),
		map[string]string{"httpServerKeyStorePassword": "s3cret"})
	require.NoError(t, err)
	cfg, err := c.AdminTLSConfig()
	require.NoError(t, err)
	require.Equal(t, "localhost", cfg.Certificates[0].Leaf.Subject.CommonName)
}

// TestTrustStorePasswordFallback: an empty trust store password tries the
// key store's, as upstream's getHttpServerTrustStorePassword falls back
// to it.
func TestTrustStorePasswordFallback(t *testing.T) {
	_, err := tlsConfig(t, tlsFixture("server-aes.p12"), tlsFixture("truststore.p12"), map[string]string{"httpServerTrustStorePassword": ""})
	require.NoError(t, err)
	_, err = tlsConfig(t, tlsFixture("server-aes.p12"), tlsFixture("truststore.p12"), map[string]string{"httpServerTrustStorePassword": "nope"})
	require.ErrorContains(t, err, "wrong password (httpServerTrustStorePassword)")
}

// TestKeyStoreErrors: each mistake is refused at load, naming the key,
// the file and what to do.
func TestKeyStoreErrors(t *testing.T) {
	pemKey := filepath.Join(t.TempDir(), "key.pem")
	require.NoError(t, os.WriteFile(pemKey, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte{1}}), 0o600))
	for _, tc := range []struct {
		name              string
		keyStore, trust   string
		extra             map[string]string
		want              []string
		unwantedSubstring string
	}{
		{name: "jks", keyStore: tlsFixture("server.jks"), trust: tlsFixture("truststore.p12"),
			want: []string{`httpServerKeyStorePath: "testdata/tls/server.jks" is a JKS key store`,
				"keytool -importkeystore -srckeystore testdata/tls/server.jks -destkeystore testdata/tls/server.jks.p12 -deststoretype pkcs12"}},
		{name: "pem", keyStore: pemKey, trust: tlsFixture("truststore.p12"), want: []string{"is PEM, not a PKCS#12 store", "openssl pkcs12 -export"}},
		{name: "wrong password", keyStore: tlsFixture("server-aes.p12"), trust: tlsFixture("truststore.p12"),
			extra: map[string]string{"httpServerKeyStorePassword": "wrong"},
			want:  []string{`httpServerKeyStorePath: "testdata/tls/server-aes.p12": wrong password (httpServerKeyStorePassword)`}},
		{name: "missing file", keyStore: tlsFixture("nope.p12"), trust: tlsFixture("truststore.p12"),
			want: []string{`httpServerKeyStorePath: reading "testdata/tls/nope.p12"`}},
		{name: "not a store", keyStore: tlsFixture("gen.sh"), trust: tlsFixture("truststore.p12"),
			want: []string{`httpServerKeyStorePath: "testdata/tls/gen.sh" is not a PKCS#12 store bookie-index can read`}},
		{name: "trust store with a key", keyStore: tlsFixture("server-aes.p12"), trust: tlsFixture("server-aes.p12"),
			want: []string{`httpServerTrustStorePath: "testdata/tls/server-aes.p12" holds a private key`}},
		{name: "trust store not marked", keyStore: tlsFixture("server-aes.p12"), trust: tlsFixture("truststore-openssl.p12"),
			want: []string{"its certificates are not marked as trusted", "keytool -importcert -storetype pkcs12"}},
		{name: "no stores", keyStore: "", trust: "",
			want: []string{"2 problems", "httpServerKeyStorePath: empty, but httpServerTlsEnable=true needs a PKCS#12 key store",
				"httpServerTrustStorePath: empty, but httpServerTlsEnable=true requires client certificates"}},
		{name: "no trust store", keyStore: tlsFixture("server-aes.p12"), trust: "",
			want: []string{"httpServerTrustStorePath: empty"}, unwantedSubstring: "httpServerKeyStorePath"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tlsConfig(t, tc.keyStore, tc.trust, tc.extra)
			require.Error(t, err)
			for _, w := range tc.want {
				require.Contains(t, err.Error(), w)
			}
			if tc.unwantedSubstring != "" {
				require.NotContains(t, err.Error(), tc.unwantedSubstring)
			}
		})
	}
	// TLS off: the stores are not read.
	_, err := tlsConfig(t, tlsFixture("server.jks"), "", map[string]string{"httpServerTlsEnable": "false"})
	require.NoError(t, err)
}

// TestPasswordsHidden: the passwords never show in Settings (logs, the
// server_config endpoint).
func TestPasswordsHidden(t *testing.T) {
	c, err := tlsConfig(t, tlsFixture("server-aes.p12"), tlsFixture("truststore.p12"), nil)
	require.NoError(t, err)
	s := c.Settings()
	require.Equal(t, "(hidden)", s["httpServerKeyStorePassword"])
	require.Equal(t, "(hidden)", s["httpServerTrustStorePassword"])
	require.Equal(t, tlsFixture("server-aes.p12"), s["httpServerKeyStorePath"])
	for k, v := range s {
		require.NotContains(t, v, testStorePassword, k)
	}
}
