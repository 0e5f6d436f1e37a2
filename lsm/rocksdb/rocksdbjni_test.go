package rocksdb

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// jniDir holds databases that RocksDB itself wrote through rocksdbjni (the
// writer in interop/rocksdb; testdata/rocksdbjni/README.md says how), each
// beside <name>.json: what RocksDB read back from it.
const jniDir = "testdata/rocksdbjni"

// jniExpected is a <name>.json of the fixture writer.
type jniExpected struct {
	RocksDB       string `json:"rocksdb"`
	FormatVersion uint32 `json:"format_version"`
	Checksum      string `json:"checksum"`
	Compression   string `json:"compression"`
	Partitioned   bool   `json:"partitioned_index"`
	MergeKey      string `json:"merge_key"` // hex; a table holds a merge record for it
	Tables        []struct {
		File            string  `json:"file"`
		FormatVersion   uint32  `json:"format_version"`
		CompressionName string  `json:"compression_name"`
		MergeOperator   *string `json:"merge_operator"`
		Entries         uint64  `json:"entries"`
		RangeDeletions  uint64  `json:"range_deletions"`
		DataBlocks      int     `json:"data_blocks"`
		IndexPartitions int     `json:"index_partitions"`
	} `json:"tables"`
	Keys   int         `json:"keys"`
	SHA256 string      `json:"sha256"`
	KVs    [][2]string `json:"kvs"` // hex; absent in the committed files
}

// jniChecksumNames maps RocksJava's ChecksumType names to ours.
var jniChecksumNames = map[string]string{
	"kNoChecksum": "none", "kCRC32c": "CRC32c", "kxxHash": "xxHash", "kxxHash64": "xxHash64", "kXXH3": "XXH3",
}

// kvDigest is the fixture writer's digest of a scan: SHA-256 over each key
// and value as a 4-byte big-endian length and its bytes, in order.
func kvDigest(kvs [][2][]byte) string {
	h := sha256.New()
	for _, kv := range kvs {
		for _, b := range kv {
			h.Write(binary.BigEndian.AppendUint32(nil, uint32(len(b))))
			h.Write(b)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// checkJNIFixture opens dir/name with this reader and checks it against
// dir/name.json: every visible key and value (their digest, and each one
// when the file lists them) and each table's format, checksum and
// compression as RocksDB reported them.
func checkJNIFixture(t *testing.T, dir, name string) jniExpected {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, name+".json"))
	require.NoError(t, err)
	var want jniExpected
	require.NoError(t, json.Unmarshal(raw, &want))

	db, err := Open(vfs.Default, filepath.Join(dir, name))
	require.NoError(t, err, "RocksDB %s wrote it", want.RocksDB)
	defer db.Close()
	got, err := scanAll(db)
	if want.MergeKey != "" {
		// Refused, by the merge record's key: its value is the merge
		// operator's to compute.
		require.ErrorIs(t, err, ErrUnsupported)
		require.ErrorContains(t, err, "merge record for key "+want.MergeKey)
		_, err = db.Get(mustHex(t, want.MergeKey))
		require.ErrorIs(t, err, ErrUnsupported)
		require.ErrorContains(t, err, "merge record for key "+want.MergeKey)
		return want
	}
	require.NoError(t, err)
	if want.KVs != nil {
		require.Len(t, got, len(want.KVs))
		for i, kv := range want.KVs {
			require.Equal(t, kv[0], hex.EncodeToString(got[i][0]), "key %d", i)
			require.Equal(t, kv[1], hex.EncodeToString(got[i][1]), "value of key %s", kv[0])
		}
	}
	require.Equal(t, want.Keys, len(got))
	require.Equal(t, want.SHA256, kvDigest(got))

	props := db.Props()
	require.Len(t, props.Tables, len(want.Tables))
	byFile := map[string]TableProps{}
	for _, tp := range props.Tables {
		byFile[fmt.Sprintf("%06d.sst", tp.FileNumber)] = tp
	}
	for _, wt := range want.Tables {
		tp, ok := byFile[wt.File]
		require.True(t, ok, "table %s", wt.File)
		require.Equal(t, wt.FormatVersion, tp.FormatVersion, wt.File)
		require.Equal(t, want.FormatVersion, tp.FormatVersion, wt.File)
		require.Equal(t, jniChecksumNames[want.Checksum], tp.Checksum, wt.File)
		require.Equal(t, wt.Entries, tp.Entries, wt.File)
		require.Equal(t, wt.RangeDeletions, tp.RangeDeletions, wt.File)
		require.Equal(t, wt.DataBlocks, tp.DataBlocks, wt.File)
		require.Equal(t, wt.IndexPartitions, tp.IndexPartitions, wt.File)
		if wt.FormatVersion < 7 {
			require.Equal(t, wt.CompressionName, tp.Compression, wt.File)
		}
	}
	return want
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	return b
}

// jniFixtureNames lists the databases under dir (each <name>.json).
func jniFixtureNames(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.json"))
	require.NoError(t, err)
	var names []string
	for _, p := range m {
		names = append(names, strings.TrimSuffix(filepath.Base(p), ".json"))
	}
	sort.Strings(names)
	return names
}

// TestRocksDBJNIFixtures reads the committed databases that rocksdbjni 9.9.3
// (BookKeeper 4.18.2's) and 10.10.1 wrote: format_version 5, 6 and 7, every
// checksum type, LZ4, Snappy and no compression.
func TestRocksDBJNIFixtures(t *testing.T) {
	names := jniFixtureNames(t, jniDir)
	require.NotEmpty(t, names)
	seen := map[string]bool{}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			want := checkJNIFixture(t, jniDir, name)
			seen[fmt.Sprintf("fv%d", want.FormatVersion)] = true
			seen[want.Checksum] = true
			seen[want.Compression] = true
			seen[want.RocksDB] = true
		})
	}
	// The set covers what the brief of this reader claims.
	for _, k := range []string{"fv5", "fv6", "fv7", "kCRC32c", "kxxHash", "kxxHash64", "kXXH3",
		"LZ4_COMPRESSION", "NO_COMPRESSION", "SNAPPY_COMPRESSION", "9.9.3", "10.10.1"} {
		require.True(t, seen[k], "no committed fixture has %s", k)
	}
}

// TestRocksDBJNIRegenerate builds interop/rocksdb with Maven, runs its
// writer on rocksdbjni 10.10.1 and 9.9.3 into a temporary directory, and
// checks this reader against every key and value RocksDB reports; and that
// the committed fixtures hold what the writer writes today. It needs java
// and mvn (Maven downloads rocksdbjni on first use) and skips without them,
// unless ROCKSDB_INTEROP=required (CI's setting: there it must run);
// ROCKSDB_INTEROP=off skips it. It skips under -race and -tags invariants,
// which change nothing in a Maven run.
func TestRocksDBJNIRegenerate(t *testing.T) {
	mode := os.Getenv("ROCKSDB_INTEROP")
	if mode == "off" {
		t.Skip("ROCKSDB_INTEROP=off")
	}
	if raceEnabled || base.InvariantsEnabled {
		t.Skip("a -race or -tags invariants build: the Maven run is the same in a plain one")
	}
	for _, tool := range []string{"java", "mvn"} {
		if _, err := exec.LookPath(tool); err != nil {
			if mode == "required" {
				t.Fatalf("ROCKSDB_INTEROP=required, but %s is not on PATH", tool)
			}
			t.Skipf("%s is not on PATH: the committed fixtures (TestRocksDBJNIFixtures) stand in for RocksDB", tool)
		}
	}
	if testing.Short() && mode != "required" {
		t.Skip("-short: skips the Maven build")
	}
	module, err := filepath.Abs("../../interop/rocksdb")
	require.NoError(t, err)
	build, out := t.TempDir(), t.TempDir()
	run := func(name string, args ...string) {
		cmd := exec.Command(name, args...)
		cmd.Dir = module
		b, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s %s:\n%s", name, strings.Join(args, " "), b)
	}
	run("mvn", "-q", "-B", "package", "-Dinterop.buildDir="+build)
	for _, v := range []string{"10.10.1", "9.9.3"} {
		cp := filepath.Join(build, "classes") + string(os.PathListSeparator) + filepath.Join(build, "lib", "rocksdbjni-"+v+".jar")
		run("java", "-cp", cp, "io.github.bookieindex.interop.rocksdb.FixtureWriter", out)
	}
	names := jniFixtureNames(t, out)
	committed := map[string]bool{}
	for _, n := range jniFixtureNames(t, jniDir) {
		committed[n] = true
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			want := checkJNIFixture(t, out, name)
			require.NotEmpty(t, want.KVs)
			if committed[name] {
				raw, err := os.ReadFile(filepath.Join(jniDir, name+".json"))
				require.NoError(t, err)
				var old jniExpected
				require.NoError(t, json.Unmarshal(raw, &old))
				require.Equal(t, old.SHA256, want.SHA256, "the committed %s no longer holds what the writer writes", name)
			}
		})
	}
	for n := range committed {
		require.Contains(t, names, n, "the writer no longer writes the committed %s", n)
	}
}

// TestLdbRewrittenFixtures reads databases that Debian's ldb (RocksDB 7.8.3)
// rewrote with its defaults (testdata/ldb/make.sh): tables of
// format_version 5 with XXH3 checksums and Snappy whose properties name
// ldb's StringAppendOperator, with no merge record in them. Each must read
// as `ldb scan` lists it, and hold what the rocksdbjni database it was made
// from held.
func TestLdbRewrittenFixtures(t *testing.T) {
	for _, c := range []struct{ name, from string }{
		{"ldb-compact-loc", "loc-v9-fv5-xxhash-lz4"},
		{"ldb-compact-ledgers", "ledgers-v9-fv5-xxhash-snappy"},
		{"ldb-load-loc", "loc-v10-fv5-xxh3-lz4"},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := ldbScan(t, filepath.Join("testdata", "ldb", c.name+".scan.txt"))
			db, err := Open(vfs.Default, filepath.Join("testdata", "ldb", c.name))
			require.NoError(t, err)
			defer db.Close()
			got, err := scanAll(db)
			require.NoError(t, err)
			require.Equal(t, want, got)

			raw, err := os.ReadFile(filepath.Join(jniDir, c.from+".json"))
			require.NoError(t, err)
			var from jniExpected
			require.NoError(t, json.Unmarshal(raw, &from))
			require.Equal(t, from.SHA256, kvDigest(got), "ldb's rewrite of %s holds other data", c.from)

			tables := db.Props().Tables
			require.NotEmpty(t, tables)
			for _, tp := range tables {
				require.Equal(t, uint32(5), tp.FormatVersion)
				require.Equal(t, "XXH3", tp.Checksum)
				require.Equal(t, "Snappy", tp.Compression)
				require.Equal(t, "StringAppendOperator", tp.MergeOperator)
			}
		})
	}
}
