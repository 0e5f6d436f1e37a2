package manifest

import (
	"math/rand"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// noSpaceAt fails operation number n (from 0, counting while enabled)
// with ENOSPC, as a full disk would.
type noSpaceAt struct {
	n   int64
	ops atomic.Int64
}

func (i *noSpaceAt) MaybeError(vfs.Op) error {
	if i.ops.Add(1)-1 == i.n {
		return syscall.ENOSPC
	}
	return nil
}

// TestNoSpaceLogAndApplyRecovers fails each I/O operation of a LogAndApply
// (append, and rotation) in turn with ENOSPC: the failure matches
// ErrNoSpace and is not sticky; the retried edit and the next one succeed,
// with nothing more appended to the manifest that failed; a crash then
// recovers the state after both, and only the current manifest is left.
func TestNoSpaceLogAndApplyRecovers(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts *Options
	}{{"append", nil}, {"rotate", &Options{MaxManifestSize: 1}}} {
		t.Run(tc.name, func(t *testing.T) {
			failures := 0
			for failAt := int64(0); ; failAt++ {
				mem := newTestFS(t)
				inj := &noSpaceAt{n: failAt}
				toggle := vfs.NewToggle(inj)
				fs := vfs.NewErrorFS(mem, toggle)
				vs := mustCreate(t, fs, tc.opts)
				w := &workload{rng: rand.New(rand.NewSource(9))}
				for range 10 {
					require.NoError(t, vs.LogAndApply(w.nextEdit(vs)))
				}
				edit := w.nextEdit(vs)
				toggle.On()
				err := vs.LogAndApply(edit)
				toggle.Off()
				if inj.ops.Load() <= failAt {
					require.NoError(t, err)
					require.Greater(t, failures, 1, "LogAndApply never failed")
					require.NoError(t, vs.Close())
					return
				}
				if err != nil {
					failures++
					require.True(t, errors.Is(err, base.ErrNoSpace), "%v", err)
					require.True(t, errors.Is(err, syscall.ENOSPC), "%v", err)
					failed := vs.ManifestFileNum()
					require.NoError(t, vs.LogAndApply(edit), "failing op %d", failAt)
					require.NotEqual(t, failed, vs.ManifestFileNum(), "appended to the manifest that failed")
				}
				require.NoError(t, vs.LogAndApply(w.nextEdit(vs)))
				want := stateString(vs)
				crashed := mem.CrashClone(vfs.CrashOptions{})
				recovered, err := Recover(crashed, testDir, tc.opts)
				require.NoError(t, err, "failing op %d", failAt)
				checkRecovered(t, recovered, crashed, want)
				require.NoError(t, recovered.Close())
				require.NoError(t, vs.Close())
			}
		})
	}
}
