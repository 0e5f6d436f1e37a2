package journal

import (
	stderrors "errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// failOp is an injector that fails operation number index (from 0) with
// err, and counts the operations.
type failOp struct {
	index int64
	err   error
	ops   atomic.Int64
	hit   atomic.Pointer[vfs.Op]
}

func (f *failOp) MaybeError(op vfs.Op) error {
	if f.ops.Add(1)-1 == f.index {
		f.hit.Store(&op)
		return f.err
	}
	return nil
}

// errorWorkload opens a journal on fs and adds entries one at a time, with
// a checkpoint every 4 adds, rolling files and removing old ones. It
// returns the adds that completed, what Open, the adds and the
// checkpoints returned, and how often OnFailure was called.
type errorRun struct {
	openErr   error
	done      []addRecord
	addErrs   []error
	ckptErrs  []error
	failures  int
	closeErr  error
	journalOK bool
}

func errorWorkload(t *testing.T, fs vfs.FS) errorRun {
	var run errorRun
	opts := testOptions(fs)
	opts.MaxFileSize = 1200
	opts.PreAllocSize = 512 // several pre-allocations per file, each failed in turn
	opts.MaxBackupJournals = -1
	opts.OnFailure = func(string, error) { run.failures++ }
	s, err := Open(opts, nil)
	if err != nil {
		run.openErr = err
		return run
	}
	for e := range int64(24) {
		p := []byte(strings.Repeat(fmt.Sprint(e), 40))
		c := s.Add(1, e, p)
		if err := c.Wait(); err != nil {
			run.addErrs = append(run.addErrs, err)
		} else {
			run.done = append(run.done, addRecord{1, e, string(p), c.Mark()})
		}
		// The pre-allocator's steps in turn, as on a disk, where the
		// writer waits for fsyncs and does not outrun it.
		waitAheadIdle(t, s.Journals()[0])
		if e%4 == 3 {
			if err := s.SetCheckpointed(s.CurrentMark()); err != nil {
				run.ckptErrs = append(run.ckptErrs, err)
			}
		}
	}
	run.closeErr = s.Close()
	// After Close: a roll may fail after the last add completed.
	run.journalOK = s.Err() == nil
	return run
}

// TestFailEveryOperation fails each file system operation of a workload
// in turn, with ENOSPC, EIO and a torn write: a failed write or fsync
// fails the add waiting for it and every later one, with an error that
// names the file and matches the cause (a full disk matches ErrNoSpace);
// OnFailure is called once; a failed checkpoint step fails only the
// checkpoint; nothing failed was reported durable, and a power-loss image
// of the file system then opens and replays every add that completed.
func TestFailEveryOperation(t *testing.T) {
	clean := &failOp{index: -1}
	mem := vfs.NewMem()
	run := errorWorkload(t, vfs.NewErrorFS(mem, clean))
	require.NoError(t, run.openErr)
	require.Empty(t, run.addErrs)
	require.Empty(t, run.ckptErrs)
	total := clean.ops.Load()
	ids, err := ListFiles(mem, "j")
	require.NoError(t, err)
	require.Greater(t, total, int64(100))
	t.Logf("%d operations; the clean run left %d journal files", total, len(ids))

	causes := []struct {
		name   string
		err    error
		is     error
		nospac bool
	}{
		{"ENOSPC", syscall.ENOSPC, syscall.ENOSPC, true},
		{"EIO", syscall.EIO, syscall.EIO, false},
		{"torn-ENOSPC", stderrors.Join(vfs.ErrShortWrite, syscall.ENOSPC), syscall.ENOSPC, true},
	}
	for _, cause := range causes {
		for k := range total {
			mem := vfs.NewMem()
			inj := &failOp{index: k, err: cause.err}
			run := errorWorkload(t, vfs.NewErrorFS(mem, inj))
			op := inj.hit.Load()
			if op == nil {
				// The pre-allocator's steps depend on timing: a run
				// may end with fewer operations than the clean one.
				require.LessOrEqual(t, inj.ops.Load(), k, "%s at %d: no operation failed", cause.name, k)
				continue
			}
			where := fmt.Sprintf("%s at operation %d (%s)", cause.name, k, op)

			for _, err := range append(append([]error{run.openErr}, run.addErrs...), run.ckptErrs...) {
				if err != nil {
					require.ErrorIs(t, err, cause.is, where)
				}
			}
			require.LessOrEqual(t, run.failures, 1, where)
			if run.openErr == nil {
				// The journal failed (a write, an fsync or a roll) or
				// not; Close says which.
				require.Equal(t, run.failures == 0, run.journalOK, where)
				if run.failures == 0 {
					require.NoError(t, run.closeErr, where)
				} else {
					require.ErrorIs(t, run.closeErr, cause.is, where)
				}
			}
			if run.openErr == nil && len(run.addErrs) > 0 {
				require.Equal(t, 1, run.failures, where)
				// Sticky: every add after the first failure failed.
				first := run.addErrs[0]
				require.Equal(t, 24, len(run.done)+len(run.addErrs), where)
				for _, a := range run.done {
					require.Less(t, a.entry, int64(len(run.done)), "%s: add %d completed after a failure", where, a.entry)
				}
				require.ErrorContains(t, first, "j/current", "%s: the error names the file", where)
				if cause.nospac {
					require.ErrorIs(t, first, ErrNoSpace, where)
				} else {
					require.False(t, errors.Is(first, ErrNoSpace), where)
				}
			}

			img := mem.CrashClone(vfs.CrashOptions{})
			mark, _ := ReadLastMark(img, []string{"l"}, "lastMark")
			s, got := openCollect(t, testOptions(img))
			require.NoError(t, s.Close())
			replayedAt := map[int64]string{}
			for _, r := range got {
				replayedAt[r.Entry] = r.Payload
			}
			for _, a := range run.done {
				if p, ok := replayedAt[a.entry]; ok {
					require.Equal(t, a.payload, p, where)
				} else {
					require.False(t, mark.Less(a.mark), "%s: add %d completed, lost", where, a.entry)
				}
			}
		}
	}
}

// TestFullDiskIsRecognisable: the error of an add that ran out of space
// says which file and matches ErrNoSpace and ENOSPC, with the standard
// library's errors.Is as well as cockroachdb's.
func TestFullDiskIsRecognisable(t *testing.T) {
	mem := vfs.NewMem()
	full := atomic.Bool{}
	fs := vfs.NewErrorFS(mem, vfs.InjectorFunc(func(op vfs.Op) error {
		if full.Load() && op.Kind == vfs.OpWrite && filepath.Ext(op.Path) == ".txn" {
			return syscall.ENOSPC
		}
		return nil
	}))
	var failed atomic.Int32
	opts := testOptions(fs)
	opts.OnFailure = func(dir string, err error) {
		require.Equal(t, "j", dir)
		require.ErrorIs(t, err, ErrNoSpace)
		failed.Add(1)
	}
	s, _ := openCollect(t, opts)
	require.NoError(t, s.Add(1, 0, []byte("fits")).Wait())
	full.Store(true)
	err := s.Add(1, 1, []byte("does not fit")).Wait()
	require.True(t, stderrors.Is(err, ErrNoSpace) && stderrors.Is(err, syscall.ENOSPC), "%v", err)
	require.True(t, errors.Is(err, ErrNoSpace) && errors.Is(err, syscall.ENOSPC))
	require.Contains(t, err.Error(), "journal: writing j/current/")
	require.Equal(t, int32(1), failed.Load())
	err = s.Add(1, 2, []byte("later")).Wait()
	require.ErrorIs(t, err, ErrNoSpace, "later adds fail with the same cause")
	require.Contains(t, err.Error(), "journal: j has failed")
	require.ErrorIs(t, s.Close(), ErrNoSpace)
}
