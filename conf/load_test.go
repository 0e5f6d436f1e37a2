package conf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/journal"
	"github.com/stretchr/testify/require"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

// TestDefaultsDecode checks that every key's default decodes (other code
// relies on it) and that the embedded bk_server.conf lists every key, once,
// at its default, and nothing else.
func TestDefaultsDecode(t *testing.T) {
	c := &Config{}
	for _, s := range keySpecs() {
		require.NoError(t, s.decode(c, s.def), s.name)
	}
	props, err := parseProperties(embeddedServerConf)
	require.NoError(t, err)
	inFile := map[string]string{}
	for _, p := range props {
		_, dup := inFile[p.key]
		require.False(t, dup, "%s is in the embedded file twice", p.key)
		inFile[p.key] = p.value
	}
	for _, s := range keySpecs() {
		v, ok := inFile[s.name]
		require.True(t, ok, "%s is missing from the embedded bk_server.conf", s.name)
		require.Equal(t, s.def, v, "%s: the embedded file and the default differ", s.name)
		delete(inFile, s.name)
	}
	require.Empty(t, inFile, "the embedded bk_server.conf has keys Load does not honour")
}

func TestEmbeddedDefaultLoads(t *testing.T) {
	c, err := Load(LoadOptions{})
	require.NoError(t, err)
	want := &Config{
		LedgerDirectories:               []string{"data/ledgers"},
		IndexDirectories:                []string{"data/ledgers"},
		HTTPServerEnabled:               true,
		HTTPServerHost:                  "127.0.0.1",
		HTTPServerPort:                  8080,
		HTTPServerMaxEntryBytesInFlight: 128 << 20,
		NettyMaxFrameSizeBytes:          5 << 20,
		LogFormat:                       "text",
		PrometheusStatsHTTPEnable:       true,
		PrometheusStatsHTTPAddress:      "0.0.0.0",
		PrometheusStatsHTTPPort:         8000,
		PrometheusStatsLatencyRollover:  time.Minute,
		EntryLocationRocksdbConf:        "conf/entry_location_rocksdb.conf",
		EntryLocationCompactionInterval: -time.Second,
		GCWaitTime:                      600 * time.Second,
		GC: bookie.GCOptions{
			MinorCompactionThreshold: 0.2, MinorCompactionInterval: time.Hour, MinorCompactionMaxTime: -time.Millisecond,
			MajorCompactionThreshold: 0.8, MajorCompactionInterval: 24 * time.Hour, MajorCompactionMaxTime: -time.Millisecond,
			CompactionRateByEntries: 1000, CompactionRateByBytes: 1000000,
		},
		Journal: journal.Options{
			JournalDirectories:      []string{"data/journal"},
			MaxGroupWait:            2 * time.Millisecond,
			BufferedWritesThreshold: 512 << 10,
			MaxFileSize:             2048 << 20,
			PreAllocSize:            16 << 20,
			WriteBufferSize:         64 << 10,
			AlignmentSize:           512,
			MaxBackupJournals:       5,
			FormatVersionToWrite:    6,
			PageCacheFlushInterval:  time.Second,
		},
		FlushInterval:    10 * time.Second,
		EnableStatistics: true,
		MaxOperationNumbersInSingleRocksdbWriteBatch: 100000,
		LogSizeLimit:                      1 << 30,
		WriteCacheMaxSizeMB:               512,
		ReadAheadCacheMaxSizeMB:           512,
		ReadAheadCacheBatchSize:           100,
		ReadAheadCacheBatchBytesSize:      -1,
		MaxThrottleTime:                   10 * time.Second,
		IdleCompactionDelay:               30 * time.Second,
		CompactionRate:                    1000,
		ReadOnlyModeEnabled:               true,
		DiskUsageThreshold:                0.95,
		DiskUsageWarnThreshold:            0.90,
		DiskUsageLwmThreshold:             0.95,
		DiskCheckInterval:                 10 * time.Second,
		ReadOnlyModeOnAnyDiskFullEnabled:  true,
		MinUsableSizeForIndexFileCreation: 100 << 20,
		MinUsableSizeForEntryLogCreation:  1288490184,
		RocksDB: RocksDBSettings{
			BlockCacheSize:                    256 << 20,
			WriteBufferSizeMB:                 64,
			SSTSizeInMB:                       64,
			BlockSize:                         65536,
			BloomFilterBitsPerKey:             10,
			NumLevels:                         -1,
			NumFilesInLevel0:                  4,
			MaxSizeInLevel1MB:                 256,
			LZ4CompressionEnabled:             true,
			FormatVersion:                     5,
			ChecksumType:                      "kxxHash",
			LogLevel:                          "info",
			PartitionedIndexAndFiltersEnabled: true,
		},
		Source: EmbeddedServerConfName,
	}
	require.Equal(t, want, c)
	require.NoError(t, c.Validate())
	require.Equal(t, []string{filepath.Join("data", "ledgers", "current", "locations")}, c.LocationsPaths())

	// An empty file gives the same configuration: the defaults are the
	// embedded file's values.
	fromEmpty, err := Load(LoadOptions{Path: writeFile(t, "empty.conf", "")})
	require.NoError(t, err)
	fromEmpty.Source = c.Source
	require.Equal(t, c, fromEmpty)
	require.Equal(t, embeddedServerConf, EmbeddedServerConf())
}

// TestPrecedence sets one key in every layer combination: defaults < file
// < environment < overrides.
func TestPrecedence(t *testing.T) {
	file := writeFile(t, "bk_server.conf", "httpServerPort=1001\nflushInterval=2000\n")
	for _, tc := range []struct {
		name      string
		path      string
		env       []string
		overrides map[string]string
		wantPort  int
	}{
		{"default", "", nil, nil, 8080},
		{"file", file, nil, nil, 1001},
		{"env over file", file, []string{"BK_httpServerPort=1002"}, nil, 1002},
		{"env over default", "", []string{"BK_httpServerPort=1002"}, nil, 1002},
		{"override over env", file, []string{"BK_httpServerPort=1002"}, map[string]string{"httpServerPort": "1003"}, 1003},
		{"override over file", file, nil, map[string]string{"httpServerPort": "1003"}, 1003},
		{"empty override means default", file, []string{"BK_httpServerPort=1002"}, map[string]string{"httpServerPort": ""}, 8080},
		{"empty env means default", file, []string{"BK_httpServerPort="}, nil, 8080},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setEnv(t, tc.env...)
			c, err := Load(LoadOptions{Path: tc.path, Environment: true, Overrides: tc.overrides})
			require.NoError(t, err)
			require.Equal(t, tc.wantPort, c.HTTPServerPort)
			if tc.path != "" {
				require.Equal(t, 2*time.Second, c.FlushInterval, "untouched file key")
				require.Equal(t, tc.path, c.Source)
			}
		})
	}
}

// setEnv sets "NAME=value" variables for the test (t.Setenv restores them).
func setEnv(t *testing.T, env ...string) {
	t.Helper()
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		t.Setenv(name, value)
	}
}

func TestEnvironment(t *testing.T) {
	setEnv(t,
		"BK_HOME=/opt/bookkeeper",       // BookKeeper's image variables that are not keys
		"BK_zkServers=zk:2181",          // a key bookie-index does not use
		"BK_ledgerDirectories=/d1, /d2", // keys, spelled as in the file
		"BK_dbStorage_rocksDB_blockSize=4096",
		"BK_httpServerEnabled=off",
	)
	c, err := Load(LoadOptions{Environment: true})
	require.NoError(t, err)
	require.Equal(t, []string{"/d1", "/d2"}, c.LedgerDirectories)
	require.Equal(t, []string{"/d1", "/d2"}, c.IndexDirectories)
	require.Equal(t, 4096, c.RocksDB.BlockSize)
	require.False(t, c.HTTPServerEnabled)
	c, err = Load(LoadOptions{})
	require.NoError(t, err)
	require.Equal(t, 65536, c.RocksDB.BlockSize, "without Environment, the environment is not read")

	setEnv(t, "BK_HTTPSERVERPORT=1")
	_, err = Load(LoadOptions{Environment: true})
	require.ErrorContains(t, err, `environment variable BK_HTTPSERVERPORT: key "HTTPSERVERPORT": keys are case-sensitive; did you mean "httpServerPort"?`)
	require.NoError(t, os.Unsetenv("BK_HTTPSERVERPORT")) // t.Setenv restores it at the end

	setEnv(t, "BK_httpServerPort=x")
	_, err = Load(LoadOptions{Environment: true})
	require.ErrorContains(t, err, `httpServerPort: "x" is not an integer (from environment variable BK_httpServerPort)`)
}

func TestFileHandling(t *testing.T) {
	t.Run("unknown keys ignored", func(t *testing.T) {
		c, err := Load(LoadOptions{Path: writeFile(t, "a.conf", "zkServers=zk:2181\nbookiePort=3181\nsome.dotted.key=1\nhttpServerPort=9\n")})
		require.NoError(t, err)
		require.Equal(t, 9, c.HTTPServerPort)
	})
	t.Run("last duplicate wins", func(t *testing.T) {
		c, err := Load(LoadOptions{Path: writeFile(t, "a.conf", "httpServerPort=1\nhttpServerPort=2\n")})
		require.NoError(t, err)
		require.Equal(t, 2, c.HTTPServerPort)
	})
	t.Run("case mismatch", func(t *testing.T) {
		path := writeFile(t, "a.conf", "# c\nhttpserverport=1\n")
		_, err := Load(LoadOptions{Path: path})
		require.ErrorContains(t, err, path+`:2: key "httpserverport": keys are case-sensitive; did you mean "httpServerPort"?`)
	})
	t.Run("missing file", func(t *testing.T) {
		_, err := Load(LoadOptions{Path: filepath.Join(t.TempDir(), "nope.conf")})
		require.ErrorContains(t, err, "reading configuration file")
		require.ErrorContains(t, err, "nope.conf")
	})
	t.Run("syntax error", func(t *testing.T) {
		path := writeFile(t, "a.conf", "a=1\nb=\\u00\n")
		_, err := Load(LoadOptions{Path: path})
		require.ErrorContains(t, err, path+": line 2")
	})
	t.Run("decode error names file and line", func(t *testing.T) {
		path := writeFile(t, "a.conf", "\n\ndbStorage_rocksDB_blockSize=abc\n")
		_, err := Load(LoadOptions{Path: path})
		require.EqualError(t, err, `dbStorage_rocksDB_blockSize: "abc" is not an integer (from `+path+`:3)`)
	})
	t.Run("continued list", func(t *testing.T) {
		c, err := Load(LoadOptions{Path: writeFile(t, "a.conf", "ledgerDirectories=/a,\\\n    /b\nindexDirectories=/i1,/i2\n")})
		require.NoError(t, err)
		require.Equal(t, []string{"/a", "/b"}, c.LedgerDirectories)
		require.Equal(t, []string{"/i1", "/i2"}, c.IndexDirectories)
		require.Equal(t, []string{filepath.Join("/i1", "current", "locations"), filepath.Join("/i2", "current", "locations")}, c.LocationsPaths())
	})
}

func TestOverrides(t *testing.T) {
	_, err := Load(LoadOptions{Overrides: map[string]string{"httpServerPrt": "1"}})
	require.ErrorContains(t, err, `override: unknown key "httpServerPrt"`)
	_, err = Load(LoadOptions{Overrides: map[string]string{"HttpServerPort": "1"}})
	require.ErrorContains(t, err, `did you mean "httpServerPort"?`)
	c, err := Load(LoadOptions{Overrides: map[string]string{" httpServerPort ": " 7 "}})
	require.NoError(t, err)
	require.Equal(t, 7, c.HTTPServerPort)

	k, v, err := ParseOverride("a=b=c")
	require.NoError(t, err)
	require.Equal(t, "a", k)
	require.Equal(t, "b=c", v)
	k, v, err = ParseOverride(" a =")
	require.NoError(t, err)
	require.Equal(t, "a", k)
	require.Equal(t, "", v)
	for _, bad := range []string{"a", "=b", ""} {
		_, _, err = ParseOverride(bad)
		require.ErrorContains(t, err, "expected key=value", bad)
	}
}

func TestValueSpellings(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  bool
	}{{"true", true}, {"TRUE", true}, {"yes", true}, {"on", true}, {"Y", true}, {"t", true},
		{"false", false}, {"No", false}, {"off", false}, {"n", false}, {"F", false}} {
		c, err := Load(LoadOptions{Overrides: map[string]string{"dbStorage_rocksDB_lz4CompressionEnabled": tc.value}})
		require.NoError(t, err, tc.value)
		require.Equal(t, tc.want, c.RocksDB.LZ4CompressionEnabled, tc.value)
	}
	c, err := Load(LoadOptions{Overrides: map[string]string{
		"entryLocationCompactionInterval": "86400",
		"gcWaitTime":                      "1000",
		"dbStorage_maxThrottleTimeMs":     "0",
		"indexDirectories":                " ",
		"ledgerDirectories":               "./x/, y",
	}})
	require.NoError(t, err)
	require.Equal(t, 24*time.Hour, c.EntryLocationCompactionInterval)
	require.Equal(t, time.Second, c.GCWaitTime)
	require.Equal(t, time.Duration(0), c.MaxThrottleTime)
	require.Equal(t, []string{"x", "y"}, c.LedgerDirectories)
	require.Equal(t, []string{"x", "y"}, c.IndexDirectories)
}

// TestSettingsRoundTrip: loading the effective settings as overrides gives
// the same configuration back.
func TestSettingsRoundTrip(t *testing.T) {
	c, err := Load(LoadOptions{Overrides: map[string]string{
		"ledgerDirectories": "/a,/b", "indexDirectories": "/c,/d", "httpServerEnabled": "no",
		"entryLocationCompactionInterval": "3600", "dbStorage_rocksDB_checksum_type": "kCRC32c",
		"dbStorage_rocksDB_logPath": "/var/log/x",
	}})
	require.NoError(t, err)
	s := c.Settings()
	require.Len(t, s, len(Keys()))
	require.Equal(t, "/a,/b", s["ledgerDirectories"])
	require.Equal(t, "3600", s["entryLocationCompactionInterval"])
	require.Equal(t, "false", s["httpServerEnabled"])
	again, err := Load(LoadOptions{Overrides: s})
	require.NoError(t, err)
	again.Source = c.Source
	require.Equal(t, c, again)
}

// TestValidationErrors covers every error Load reports for a bad value,
// with the key, the value and what is accepted.
func TestValidationErrors(t *testing.T) {
	tokenDir := t.TempDir()
	emptyToken := filepath.Join(tokenDir, "empty")
	require.NoError(t, os.WriteFile(emptyToken, []byte(" \n"), 0o600))
	twoTokens := filepath.Join(tokenDir, "two")
	require.NoError(t, os.WriteFile(twoTokens, []byte("a b\n"), 0o600))
	for _, tc := range []struct {
		overrides map[string]string
		want      string
	}{
		// Decoding.
		{map[string]string{"httpServerPort": "80a"}, `httpServerPort: "80a" is not an integer (from override)`},
		{map[string]string{"httpServerPort": "70000"}, `httpServerPort: "70000" is out of range [0, 65535]`},
		{map[string]string{"httpServerPort": "-1"}, `httpServerPort: "-1" is out of range [0, 65535]`},
		{map[string]string{"httpServerPort": "99999999999999999999"}, `httpServerPort: "99999999999999999999" is out of range [0, 65535]`},
		{map[string]string{"httpServerEnabled": "maybe"}, `httpServerEnabled: "maybe" is not a boolean (accepted: true, false, yes, no, on, off)`},
		{map[string]string{"gcWaitTime": "1s"}, `gcWaitTime: "1s" is not an integer (milliseconds)`},
		{map[string]string{"entryLocationCompactionInterval": "99999999999999"}, `entryLocationCompactionInterval: "99999999999999" is out of range [-9223372036, 9223372036] (seconds)`},
		{map[string]string{"flushInterval": "1e3"}, `flushInterval: "1e3" is not an integer (milliseconds)`},
		{map[string]string{"ledgerDirectories": "/a,,/b"}, `ledgerDirectories: "/a,,/b" has an empty directory name`},
		{map[string]string{"dbStorage_rocksDB_blockSize": "abc"}, `dbStorage_rocksDB_blockSize: "abc" is not an integer`},
		{map[string]string{"dbStorage_rocksDB_checksum_type": "kXXHash"}, `dbStorage_rocksDB_checksum_type: "kXXHash" is not accepted (accepted: kNoChecksum, kCRC32c, kxxHash, kxxHash64, kXXH3)`},
		{map[string]string{"dbStorage_rocksDB_writeBufferSizeMB": "0"}, `dbStorage_rocksDB_writeBufferSizeMB: "0" is out of range [1, 1048576]`},
		{map[string]string{"dbStorage_rocksDB_sstSizeInMB": "2000000"}, `dbStorage_rocksDB_sstSizeInMB: "2000000" is out of range [1, 1048576]`},
		{map[string]string{"dbStorage_rocksDB_maxSizeInLevel1MB": "-5"}, `dbStorage_rocksDB_maxSizeInLevel1MB: "-5" is out of range [1, 1048576]`},
		{map[string]string{"dbStorage_rocksDB_blockCacheSize": "0"}, `dbStorage_rocksDB_blockCacheSize: "0" is out of range`},
		{map[string]string{"dbStorage_rocksDB_numFilesInLevel0": "0"}, `dbStorage_rocksDB_numFilesInLevel0: "0" is out of range`},
		{map[string]string{"dbStorage_rocksDB_format_version": "-1"}, `dbStorage_rocksDB_format_version: "-1" is out of range`},
		{map[string]string{"dbStorage_writeCacheMaxSizeMb": "0"}, `dbStorage_writeCacheMaxSizeMb: "0" is out of range [1, 1048576]`},
		{map[string]string{"dbStorage_readAheadCacheMaxSizeMb": "x"}, `dbStorage_readAheadCacheMaxSizeMb: "x" is not an integer`},
		{map[string]string{"dbStorage_readAheadCacheBatchSize": "0"}, `dbStorage_readAheadCacheBatchSize: "0" is out of range`},
		{map[string]string{"dbStorage_readAheadCacheBatchBytesSize": "-2"}, `dbStorage_readAheadCacheBatchBytesSize: "-2" is out of range`},
		{map[string]string{"maxOperationNumbersInSingleRocksdbWriteBatch": "0"}, `maxOperationNumbersInSingleRocksdbWriteBatch: "0" is out of range`},
		{map[string]string{"logSizeLimit": "2147483648"}, `logSizeLimit: "2147483648" is out of range [0, 1073741824]`},

		// Rules between keys and rules of our own.
		{map[string]string{"ledgerDirectories": "/a,/b", "indexDirectories": "/c"}, `indexDirectories: 1 directories but ledgerDirectories has 2`},
		{map[string]string{"ledgerDirectories": "/a,/b/../a"}, `ledgerDirectories: "/a" is listed twice`},
		{map[string]string{"ledgerDirectories": "/a,/b", "indexDirectories": "/c,/c/"}, `indexDirectories: "/c" is listed twice`},
		{map[string]string{"entryLocationCompactionInterval": "60"}, `entryLocationCompactionInterval: 60 seconds is shorter than gcWaitTime (600000 ms); use at least 600 seconds, or -1 to disable (upstream: "entryLocationCompactionInterval should be >= gcWaitTime.")`},
		{map[string]string{"entryLocationCompactionInterval": "1", "gcWaitTime": "1001"}, `use at least 2 seconds`},
		{map[string]string{"gcWaitTime": "0"}, `gcWaitTime: 0 ms must be positive`},
		{map[string]string{"flushInterval": "-10"}, `flushInterval: -10 ms must be positive`},
		{map[string]string{"dbStorage_maxThrottleTimeMs": "-1"}, `dbStorage_maxThrottleTimeMs: -1 must not be negative`},
		{map[string]string{"logSizeLimit": "1024"}, `logSizeLimit: 1024 is out of range (1024, 1073741824]`},
		{map[string]string{"dbStorage_readAheadCacheBatchBytesSize": "0"}, `dbStorage_readAheadCacheBatchBytesSize: 0 must be positive, or -1 for no byte limit`},
		{map[string]string{"httpServerHost": "127.0.0.1:8080"}, `httpServerHost: "127.0.0.1:8080" is not a host name or IP address (the port goes in httpServerPort)`},
		{map[string]string{"httpServerHost": "a b"}, `httpServerHost: "a b" is not a host name or IP address`},
		{map[string]string{"httpServerAuthTokenFile": filepath.Join(tokenDir, "missing")}, `httpServerAuthTokenFile: reading`},
		{map[string]string{"httpServerAuthTokenFile": emptyToken}, `holds no token`},
		{map[string]string{"httpServerAuthTokenFile": twoTokens}, `must hold one token on one line`},

		// Engine ranges, checked in bookie-conf mode.
		{map[string]string{"dbStorage_rocksDB_blockSize": "100"}, `dbStorage_rocksDB_blockSize: 100 is not accepted by the engine: lsm: BlockSize 100 is out of range [256, 64 MiB]`},
		{map[string]string{"dbStorage_rocksDB_writeBufferSizeMB": "8192"}, `dbStorage_rocksDB_writeBufferSizeMB: 8192 is not accepted by the engine: lsm: WriteBufferSize`},
		{map[string]string{"dbStorage_rocksDB_numLevels": "1"}, `dbStorage_rocksDB_numLevels: 1 is not accepted by the engine: lsm: NumLevels 1 is out of range [2, 16]`},
		{map[string]string{"dbStorage_rocksDB_numLevels": "17"}, `dbStorage_rocksDB_numLevels: 17 is not accepted`},
		{map[string]string{"dbStorage_rocksDB_bloomFilterBitsPerKey": "65"}, `dbStorage_rocksDB_bloomFilterBitsPerKey: 65 is not accepted by the engine`},
	} {
		_, err := Load(LoadOptions{Overrides: tc.overrides})
		require.Error(t, err, "%v", tc.overrides)
		require.Contains(t, err.Error(), tc.want, "%v", tc.overrides)
	}
}

func TestValidBoundaries(t *testing.T) {
	for _, o := range []map[string]string{
		{"httpServerPort": "0"},
		{"httpServerPort": "65535"},
		{"httpServerHost": "::1"},
		{"httpServerHost": "0.0.0.0"},
		{"httpServerHost": "bookie-1.example.com"},
		{"entryLocationCompactionInterval": "600"},
		{"entryLocationCompactionInterval": "0", "gcWaitTime": "99999999", "minorCompactionInterval": "0", "majorCompactionInterval": "-1"},
		{"entryLocationCompactionInterval": "1", "gcWaitTime": "1000"},
		{"logSizeLimit": "1025"},
		{"logSizeLimit": "1073741824"},
		{"dbStorage_rocksDB_numLevels": "0"},
		{"dbStorage_rocksDB_numLevels": "16"},
		{"dbStorage_rocksDB_bloomFilterBitsPerKey": "-3"},
		{"dbStorage_rocksDB_numFilesInLevel0": "50"}, // slowdown and stop triggers rise with it
		{"dbStorage_rocksDB_format_version": "6"},
		{"dbStorage_rocksDB_checksum_type": "kXXH3"},
	} {
		_, err := Load(LoadOptions{Overrides: o})
		require.NoError(t, err, "%v", o)
	}
}

func TestReadAuthToken(t *testing.T) {
	c := &Config{}
	tok, err := c.ReadAuthToken()
	require.NoError(t, err)
	require.Equal(t, "", tok)
	c.HTTPServerAuthTokenFile = writeFile(t, "token", "  s3cret-token\n")
	tok, err = c.ReadAuthToken()
	require.NoError(t, err)
	require.Equal(t, "s3cret-token", tok)
	loaded, err := Load(LoadOptions{Overrides: map[string]string{"httpServerAuthTokenFile": c.HTTPServerAuthTokenFile}})
	require.NoError(t, err)
	require.NotContains(t, strings.Join(mapValues(loaded.Settings()), " "), "s3cret")
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// TestDocsListEveryKey keeps docs/configuration.md in step with the keys.
func TestDocsListEveryKey(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "configuration.md"))
	require.NoError(t, err)
	for _, k := range Keys() {
		require.Contains(t, string(doc), "`"+k+"`", "docs/configuration.md does not document %s", k)
	}
	for section, options := range sectionSpecs() {
		if section == sectionVersion {
			continue
		}
		for name, spec := range options {
			if spec.apply != nil || spec.silent {
				require.Contains(t, string(doc), "`"+name+"`", "docs/configuration.md does not document OPTIONS key %s", name)
			}
		}
	}
}
