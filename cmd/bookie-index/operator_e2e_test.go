package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"software.sslmate.com/src/go-pkcs12"
)

// An operator's checks of the upstream keys, from outside: serve as the
// binary runs it, with upstream's keys in the file or on the command
// line.

// operatorConf writes a bk_server.conf for one ledger directory under
// root and returns its path.
func operatorConf(t *testing.T, root string, extra ...string) string {
	t.Helper()
	confPath := filepath.Join(root, "bk_server.conf")
	lines := append([]string{
		"ledgerDirectories=" + filepath.Join(root, "l"),
		"httpServerHost=127.0.0.1", "httpServerPort=0", "flushInterval=100",
		"dbStorage_rocksDB_writeBufferSizeMB=4",
		"entryLocationRocksdbConf=" + filepath.Join(root, "absent.conf"),
	}, extra...)
	require.NoError(t, os.WriteFile(confPath, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	return confPath
}

func entryURL(base string, l, e int64) string {
	return fmt.Sprintf("%s/api/v1/ledger/entry?ledgerId=%d&entryId=%d", base, l, e)
}

// TestServeForceReadOnlyBookie: forceReadOnlyBookie=true starts serve
// read-only: writes get 503 naming the key, reads are served, the state
// endpoints say so, and the API cannot make it writable (400, as
// upstream); it needs readOnlyModeEnabled.
func TestServeForceReadOnlyBookie(t *testing.T) {
	root := t.TempDir()
	confPath := operatorConf(t, root)
	base, stop, err := startServeIn(t, "--conf", confPath)
	require.NoError(t, err)
	for e := int64(0); e < 10; e++ {
		code, body := request(t, http.MethodPut, entryURL(base, 1, e), fmt.Sprint("entry ", e), "")
		require.Equal(t, http.StatusOK, code, body)
	}
	require.NoError(t, stop())

	var stderr syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, nil, []string{"--conf", confPath, "--set", "forceReadOnlyBookie=true"}, &stderr, func(a string) { addrs <- a })
	}()
	base = "http://" + <-addrs
	for e := int64(0); e < 10; e++ {
		code, body := request(t, http.MethodGet, entryURL(base, 1, e), "", "")
		require.Equal(t, http.StatusOK, code, body)
		require.Equal(t, fmt.Sprint("entry ", e), body)
	}
	code, body := request(t, http.MethodPut, entryURL(base, 1, 10), "refused", "")
	require.Equal(t, http.StatusServiceUnavailable, code, body)
	require.Contains(t, body, "forced read-only by forceReadOnlyBookie=true")
	code, body = request(t, http.MethodGet, base+"/api/v1/bookie/state", "", "")
	require.Equal(t, http.StatusOK, code)
	var st struct{ ReadOnly bool }
	require.NoError(t, json.Unmarshal([]byte(body), &st), body)
	require.True(t, st.ReadOnly)
	code, body = request(t, http.MethodGet, base+"/api/v1/bookie/state/readonly", "", "")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `"reason" : "forced read-only by forceReadOnlyBookie=true"`)
	code, body = request(t, http.MethodPut, base+"/api/v1/bookie/state/readonly", `{"readOnly": false}`, "")
	require.Equal(t, http.StatusBadRequest, code, body)
	require.Contains(t, body, "cannot be made writable")
	code, _ = request(t, http.MethodPut, entryURL(base, 1, 10), "refused", "")
	require.Equal(t, http.StatusServiceUnavailable, code)
	cancel()
	require.NoError(t, <-done)
	require.Contains(t, stderr.String(), `level=WARN msg="storage is read-only: writes are refused, reads go on" reason="forced read-only by forceReadOnlyBookie=true"`)

	_, _, err = startServeIn(t, "--conf", confPath, "--set", "forceReadOnlyBookie=true", "--set", "readOnlyModeEnabled=false")
	require.ErrorContains(t, err, "forceReadOnlyBookie: true needs readOnlyModeEnabled=true")
}

// TestServeTLS: httpServerTlsEnable=true with a PKCS#12 key store that
// openssl made serves HTTPS to a client whose certificate the trust store
// holds, and refuses a client without one, as upstream's admin server
// requires client certificates; the certificates authenticate, so a
// non-loopback address needs no token.
func TestServeTLS(t *testing.T) {
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("no openssl command to make the key store")
	}
	root := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(openssl, args...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "openssl %v: %s", args, out)
	}
	for _, who := range []string{"server", "client"} {
		run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", who+".key", "-out", who+".pem",
			"-days", "2", "-subj", "/CN="+who, "-addext", "subjectAltName=IP:127.0.0.1")
	}
	run("pkcs12", "-export", "-inkey", "server.key", "-in", "server.pem", "-passout", "pass:ks-pass", "-out", "server.p12")
	// The trust store as Java's keytool writes it (openssl marks a trust
	// store's certificates only from 3.2 on).
	clientPEM, err := os.ReadFile(filepath.Join(root, "client.pem"))
	require.NoError(t, err)
	clientCert, err := tls.X509KeyPair(clientPEM, mustRead(t, filepath.Join(root, "client.key")))
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(clientCert.Certificate[0])
	require.NoError(t, err)
	trust, err := pkcs12.Modern.EncodeTrustStore([]*x509.Certificate{leaf}, "ts-pass")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "trust.p12"), trust, 0o600))

	confPath := operatorConf(t, root,
		"httpServerTlsEnable=true",
		"httpServerKeyStorePath="+filepath.Join(root, "server.p12"), "httpServerKeyStorePassword=ks-pass",
		"httpServerTrustStorePath="+filepath.Join(root, "trust.p12"), "httpServerTrustStorePassword=ts-pass",
		"httpServerHost=0.0.0.0")
	var stderr syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- serve(ctx, nil, []string{"--conf", confPath}, &stderr, func(a string) { addrs <- a }) }()
	var addr string
	select {
	case addr = <-addrs:
	case err := <-done:
		t.Fatalf("serve: %v\n%s", err, stderr.String())
	}
	_, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	url := "https://127.0.0.1:" + port

	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(mustRead(t, filepath.Join(root, "server.pem"))))
	get := func(certs []tls.Certificate, path string) (int, string, error) {
		client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: certs}}}
		defer client.CloseIdleConnections()
		resp, err := client.Get(url + path)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), err
	}
	code, body, err := get([]tls.Certificate{clientCert}, "/heartbeat")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "OK\n", body)
	code, body, err = get([]tls.Certificate{clientCert}, "/api/v1/config/server_config")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `"httpServerKeyStorePassword" : "(hidden)"`)
	require.NotContains(t, body, "ks-pass")
	_, _, err = get(nil, "/heartbeat")
	require.Error(t, err, "a client without a certificate is refused")
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://127.0.0.1:" + port + "/heartbeat")
	if err == nil {
		resp.Body.Close()
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "plain HTTP to the TLS port")
	}
	cancel()
	require.NoError(t, <-done)
	require.Contains(t, stderr.String(), `msg="admin HTTPS server listening (client certificates required)"`)
	require.NotContains(t, stderr.String(), "ks-pass")
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return data
}

// TestServeTLSRefusedWithoutKeyStore: TLS without a key store (or a trust
// store) refuses to start, naming the key, before any directory is made.
func TestServeTLSRefusedWithoutKeyStore(t *testing.T) {
	root := t.TempDir()
	confPath := operatorConf(t, root)
	code, _, errOut := runCmd("serve", "--conf", confPath, "--set", "httpServerTlsEnable=true")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "bookie-index serve: configuration: 2 problems:")
	require.Contains(t, errOut, "httpServerKeyStorePath: empty, but httpServerTlsEnable=true needs a PKCS#12 key store")
	require.Contains(t, errOut, "httpServerTrustStorePath: empty")
	_, err := os.Stat(filepath.Join(root, "l"))
	require.ErrorIs(t, err, os.ErrNotExist, "a refused serve made no directory")
}

// TestServeUpstreamKeys: an upstream key bookie-index does not honour is
// taken by --set as by the file and warned about when it would change
// what the storage does; a mistyped key is warned about with the key it
// is closest to; an unknown key on the command line is refused.
func TestServeUpstreamKeys(t *testing.T) {
	root := t.TempDir()
	confPath := operatorConf(t, root, "entryLogSizeLimit=1000000", "zkServers=zk1:2181")
	var stderr syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, nil, []string{"--conf", confPath, "--set", "entryLogPerLedgerEnabled=true", "--set", "metadataServiceUri=zk://zk1/ledgers"},
			&stderr, func(string) { close(ready) })
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("serve: %v\n%s", err, stderr.String())
	}
	cancel()
	require.NoError(t, <-done)
	log := stderr.String()
	require.Contains(t, log, `level=WARN msg="configuration: `+confPath+`:7: unknown key \"entryLogSizeLimit\", ignored; did you mean \"logSizeLimit\"?"`)
	require.Contains(t, log, `level=WARN msg="configuration: override: entryLogPerLedgerEnabled=true has no effect in bookie-index: `)
	require.Contains(t, log, `level=INFO msg="configuration: 2 BookKeeper keys of the rest of a bookie, not used by bookie-index: metadataServiceUri, zkServers"`)

	code, _, errOut := runCmd("serve", "--conf", confPath, "--set", "entryLogSizeLimit=1")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, `override: unknown key "entryLogSizeLimit"; did you mean "logSizeLimit"?`)
}

// TestServePortInUse: a port in use (the admin server's, the metrics
// listener's) is found before the storage opens or creates anything.
func TestServePortInUse(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	_, port, err := net.SplitHostPort(busy.Addr().String())
	require.NoError(t, err)
	root := t.TempDir()
	confPath := operatorConf(t, root)
	code, _, errOut := runCmd("serve", "--conf", confPath, "--set", "httpServerPort="+port)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "admin HTTP server (httpServerHost, httpServerPort): listening on 127.0.0.1:"+port)
	_, err = os.Stat(filepath.Join(root, "l"))
	require.ErrorIs(t, err, os.ErrNotExist, "nothing was created")

	code, _, errOut = runCmd("serve", "--conf", confPath, "--set", "statsProviderClass=PrometheusMetricsProvider",
		"--set", "prometheusStatsHttpAddress=127.0.0.1", "--set", "prometheusStatsHttpPort="+port)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "metrics listener (prometheusStatsHttpAddress, prometheusStatsHttpPort): listening on 127.0.0.1:"+port)
	_, err = os.Stat(filepath.Join(root, "l"))
	require.ErrorIs(t, err, os.ErrNotExist, "nothing was created")
}

// TestServeRelativeDirectories: directories configured relative to the
// working directory are named absolute everywhere (state, metric labels,
// the compaction endpoint's answers), and the compaction endpoint takes
// the absolute form as well as the relative one.
func TestServeRelativeDirectories(t *testing.T) {
	root := t.TempDir()
	t.Chdir(root)
	confPath := operatorConf(t, root, "ledgerDirectories=data/ledgers")
	base, stop, err := startServeIn(t, "--conf", confPath)
	require.NoError(t, err)
	abs := filepath.Join(root, "data", "ledgers")
	code, body := request(t, http.MethodGet, base+"/api/v1/bookie/state", "", "")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `"ledgerDir" : "`+abs+`/current"`)
	require.Contains(t, body, `"entryLocationDBPath" : "`+abs+`/current/locations"`)
	code, body = request(t, http.MethodGet, base+"/metrics", "", "")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `ledgerDir="`+abs+`/current"`)
	require.NotContains(t, body, `ledgerDir="data/`)
	for _, p := range []string{abs + "/current/locations", "data/ledgers/current/locations"} {
		code, body = request(t, http.MethodPut, base+"/api/v1/bookie/entry_location_compact",
			`{"entryLocationRocksDBCompact":true,"entryLocations":"`+p+`"}`, "")
		require.Equal(t, http.StatusOK, code, "%s: %s", p, body)
		waitUntil(t, "compaction done", 5*time.Second, func() bool {
			_, body := request(t, http.MethodGet, base+"/api/v1/bookie/entry_location_compact", "", "")
			return strings.Contains(body, ": false")
		})
	}
	require.NoError(t, stop())
}

// TestServeOptionNotes: an OPTIONS value RocksDB would clip is logged as
// clipped, naming the value used; a RocksDB-only option as ignored.
func TestServeOptionNotes(t *testing.T) {
	root := t.TempDir()
	optionsPath := filepath.Join(root, "entry_location_rocksdb.conf")
	require.NoError(t, os.WriteFile(optionsPath, []byte("[DBOptions]\nkeep_log_file_num=30\n[CFOptions \"default\"]\nwrite_buffer_size=1024\n"), 0o600))
	confPath := operatorConf(t, root, "entryLocationRocksdbConf="+optionsPath)
	var stderr syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- serve(ctx, nil, []string{"--conf", confPath}, &stderr, func(string) { close(ready) }) }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("serve: %v\n%s", err, stderr.String())
	}
	cancel()
	require.NoError(t, <-done)
	log := stderr.String()
	require.Contains(t, log, `msg="option value clipped, as RocksDB clips it" option="[CFOptions \"default\"] write_buffer_size=1024: clipped to 65536: `)
	require.Contains(t, log, `msg="ignored option" option="[DBOptions] keep_log_file_num=30: ignored: RocksDB-only option"`)
	require.NotContains(t, log, `msg="ignored option" option="[CFOptions \"default\"] write_buffer_size`)
}

// TestRelocateMovedDirectories: directories moved to a new mount point
// are refused by serve, which names relocate; relocate refuses while serve
// runs, and two directories swapped, naming both; then records the new
// paths, and every entry reads back through serve.
func TestRelocateMovedDirectories(t *testing.T) {
	root := t.TempDir()
	old, moved := filepath.Join(root, "old"), filepath.Join(root, "mnt")
	confFor := func(base string) string {
		path := filepath.Join(root, filepath.Base(base)+".conf")
		require.NoError(t, os.WriteFile(path, []byte(strings.Join([]string{
			"ledgerDirectories=" + filepath.Join(base, "l1") + "," + filepath.Join(base, "l2"),
			"indexDirectories=" + filepath.Join(base, "i1") + "," + filepath.Join(base, "i2"),
			"httpServerPort=0", "flushInterval=100", "dbStorage_rocksDB_writeBufferSizeMB=4",
			"entryLocationRocksdbConf=" + filepath.Join(root, "absent.conf"),
		}, "\n")+"\n"), 0o600))
		return path
	}
	oldConf, newConf := confFor(old), confFor(moved)
	base, stop, err := startServeIn(t, "--conf", oldConf)
	require.NoError(t, err)
	for l := int64(0); l < 10; l++ {
		code, body := request(t, http.MethodPut, entryURL(base, l, 0), fmt.Sprint("entry of ", l), "")
		require.Equal(t, http.StatusOK, code, body)
	}
	// relocate refuses while serve holds the indexes.
	code, _, errOut := runCmd("relocate", "--conf", oldConf)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "stop it first")
	require.NoError(t, stop())

	require.NoError(t, os.Rename(old, moved))
	_, _, err = startServeIn(t, "--conf", newConf)
	require.ErrorContains(t, err, "the directories moved: ["+filepath.Join(old, "l1")+" (index "+filepath.Join(old, "i1")+")")
	require.ErrorContains(t, err, "bookie-index relocate --conf "+newConf)

	// Swapped: refused naming both, nothing written.
	l1, l2 := filepath.Join(moved, "l1"), filepath.Join(moved, "l2")
	require.NoError(t, os.Rename(l1, l1+".tmp"))
	require.NoError(t, os.Rename(l2, l1))
	require.NoError(t, os.Rename(l1+".tmp", l2))
	code, _, errOut = runCmd("relocate", "--conf", newConf)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, l1+"/current is the ledger directory of pair 2 of this bookie (recorded at "+filepath.Join(old, "l2")+"/current), "+
		"but it is configured as the ledger directory of pair 1")
	require.True(t, strings.HasPrefix(errOut, "bookie-index relocate: "+l1+"/current is"), "one prefix: %s", errOut)
	require.NoError(t, os.Rename(l1, l1+".tmp"))
	require.NoError(t, os.Rename(l2, l1))
	require.NoError(t, os.Rename(l1+".tmp", l2))

	code, out, errOut := runCmd("relocate", "--conf", newConf)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "relocate: ["+l1+" (index "+filepath.Join(moved, "i1")+"), "+l2+" (index "+filepath.Join(moved, "i2")+")] recorded, was [")
	require.Contains(t, out, "(generation 2, 4 LAYOUT copies written)")
	code, out, _ = runCmd("relocate", "--conf", newConf)
	require.Equal(t, 0, code)
	require.Contains(t, out, "nothing to do")

	base, stop, err = startServeIn(t, "--conf", newConf)
	require.NoError(t, err)
	for l := int64(0); l < 10; l++ {
		code, body := request(t, http.MethodGet, entryURL(base, l, 0), "", "")
		require.Equal(t, http.StatusOK, code, body)
		require.Equal(t, fmt.Sprint("entry of ", l), body)
	}
	require.NoError(t, stop())
}
