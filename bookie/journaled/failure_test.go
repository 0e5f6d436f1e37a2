package journaled

import (
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/journal"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// TestJournalFailureStopsWrites fails the journal's write or fsync with
// ENOSPC or EIO: the add waiting for it fails with that error, the
// storage turns read-only for good naming the journal (OnReadOnly is told,
// so a service with the read-only mode disabled stops), later writes are
// refused, reads go on, and every add acknowledged before is there after a
// restart.
func TestJournalFailureStopsWrites(t *testing.T) {
	for _, tc := range []struct {
		name    string
		op      vfs.OpKind
		err     error
		noSpace bool
	}{
		{"write-ENOSPC", vfs.OpWrite, syscall.ENOSPC, true},
		{"sync-ENOSPC", vfs.OpSync, syscall.ENOSPC, true},
		{"write-EIO", vfs.OpWrite, syscall.EIO, false},
		{"sync-EIO", vfs.OpSync, syscall.EIO, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newTestEnv(2, 1)
			var told atomic.Pointer[string]
			env.tweak = func(o *Options) {
				o.Storage.OnReadOnly = func(readOnly bool, reason string) {
					if readOnly {
						told.Store(&reason)
					}
				}
			}
			s := env.open(t)
			for e := int64(0); e < 20; e++ {
				require.NoError(t, s.AddEntry(e%3, e, payload(e%3, e, 0)))
			}
			env.setFault(func(op vfs.Op) error {
				if op.Kind == tc.op && strings.Contains(op.Path, "/data/journal0/current/") && strings.HasSuffix(op.Path, ".txn") {
					return tc.err
				}
				return nil
			})
			err := s.AddEntry(1, 100, payload(1, 100, 0))
			require.Error(t, err)
			require.True(t, errors.Is(err, tc.err), "%v", err)
			require.Equal(t, tc.noSpace, vfs.IsNoSpace(err), "%v", err)
			require.Equal(t, tc.noSpace, errors.Is(err, journal.ErrNoSpace), "%v", err)
			env.setFault(nil) // the journal stays failed without any more faults

			ro, reason := s.ReadOnly()
			require.True(t, ro)
			require.Contains(t, reason, "journal /data/journal0 failed")
			require.NotNil(t, told.Load())
			require.Contains(t, *told.Load(), "journal /data/journal0 failed")
			err = s.AddEntry(2, 101, payload(2, 101, 0))
			require.True(t, errors.Is(err, bookie.ErrReadOnly), "%v", err)
			require.Contains(t, err.Error(), "journal /data/journal0 failed")
			ro, _, err = s.SetReadOnly(false)
			require.NoError(t, err)
			require.True(t, ro, "an operator cannot lift a failed journal: it needs a restart")
			for e := int64(0); e < 20; e++ {
				requireEntry(t, s, e%3, e, payload(e%3, e, 0))
			}
			env.crash(t, s, 0)
			s = env.open(t)
			ro, _ = s.ReadOnly()
			require.False(t, ro)
			for e := int64(0); e < 20; e++ {
				requireEntry(t, s, e%3, e, payload(e%3, e, 0))
			}
			require.NoError(t, s.AddEntry(1, 102, payload(1, 102, 0)))
			require.NoError(t, s.Close())
		})
	}
}

// TestJournalFullAtOpen: a journal directory with no room for the new
// file refuses the open, naming the file and matching ErrNoSpace; once
// there is room, the storage opens and the acknowledged adds are there.
func TestJournalFullAtOpen(t *testing.T) {
	env := newTestEnv(1, 1)
	s := env.open(t)
	for e := int64(0); e < 10; e++ {
		require.NoError(t, s.AddEntry(4, e, payload(4, e, 0)))
	}
	env.crash(t, s, 0)
	env.setFault(func(op vfs.Op) error {
		if op.Kind == vfs.OpWrite && strings.HasPrefix(op.Path, "/data/journal0/") {
			return syscall.ENOSPC
		}
		return nil
	})
	_, err := Open(env.options())
	require.Error(t, err)
	require.True(t, vfs.IsNoSpace(err), "%v", err)
	require.Contains(t, err.Error(), "/data/journal0/current/")
	env.setFault(nil)
	s = env.open(t)
	for e := int64(0); e < 10; e++ {
		requireEntry(t, s, 4, e, payload(4, e, 0))
	}
	require.NoError(t, s.Close())
}
