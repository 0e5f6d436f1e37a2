package manifest

import (
	"fmt"
	"testing"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// populate creates a database on a MemFS whose version holds about
// numTables tables spread over L0-L6, added by flush-like edits of one
// table each and moved down by move-like edits.
func populate(b *testing.B, numTables int, opts *Options) (*vfs.MemFS, *VersionSet) {
	fs := vfs.NewMem()
	require.NoError(b, fs.MkdirAll(testDir, 0o755))
	vs, err := Create(fs, testDir, opts)
	require.NoError(b, err)
	for i := range numTables {
		fileNum := vs.NextFileNum()
		key := fmt.Sprintf("k%08d", fileNum)
		m := table(fileNum, key+".a", key+".z", 1)
		level := 1 + i%(NumLevels-1)
		require.NoError(b, vs.LogAndApply(&VersionEdit{NewTables: []NewTable{{0, m}}}))
		require.NoError(b, vs.LogAndApply(&VersionEdit{
			DeletedTables: []DeletedTable{{0, fileNum}},
			NewTables:     []NewTable{{level, m}},
		}))
	}
	return fs, vs
}

// BenchmarkLogAndApply measures a pair of edits, a flush-like one adding a
// table to L0 and one dropping it again, against a version of 1,000 tables,
// on a MemFS: the CPU cost of building, installing and releasing versions,
// without fsync latency.
func BenchmarkLogAndApply(b *testing.B) {
	_, vs := populate(b, 1000, nil)
	for b.Loop() {
		fileNum := vs.NextFileNum()
		m := table(fileNum, fmt.Sprintf("k%08d.a", fileNum), fmt.Sprintf("k%08d.z", fileNum), 1)
		if err := vs.LogAndApply(&VersionEdit{NewTables: []NewTable{{0, m}}}); err != nil {
			b.Fatal(err)
		}
		if err := vs.LogAndApply(&VersionEdit{DeletedTables: []DeletedTable{{0, fileNum}}}); err != nil {
			b.Fatal(err)
		}
	}
	require.NoError(b, vs.Close())
}

// BenchmarkRecover measures Recover of a manifest of 20,000 edits (10,000
// tables), the replay an open does before rotating.
func BenchmarkRecover(b *testing.B) {
	fs, vs := populate(b, 10000, nil)
	require.NoError(b, vs.Close())
	info, err := fs.Stat(FilePath(testDir, FileKindManifest, 1))
	require.NoError(b, err)
	b.SetBytes(info.Size())
	for b.Loop() {
		// Read-only, so every iteration replays the same manifest.
		vs, err := Recover(fs, testDir, &Options{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		require.NoError(b, vs.Close())
	}
}
