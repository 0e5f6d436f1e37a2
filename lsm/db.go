package lsm

import (
	"context"
	"io"
	"sync"
	"sync/atomic"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/cache"
	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
	"github.com/bookie-index/bookie-index/lsm/internal/memtable"
	"github.com/bookie-index/bookie-index/lsm/internal/sstable"
	"github.com/bookie-index/bookie-index/lsm/internal/wal"
	"github.com/cockroachdb/errors"
)

// ErrNotFound is returned by Get for an absent key; test with errors.Is.
var ErrNotFound = base.ErrNotFound

// ErrClosed is returned by every call on a closed DB; test with errors.Is.
var ErrClosed = base.ErrClosed

// ErrReadOnly is returned by writes to a DB opened with ReadOnly.
var ErrReadOnly = errors.New("lsm: read-only")

// ErrNoSpace matches the errors of writes refused because a flush, a WAL
// or manifest write, or (at the L0 stop trigger) a compaction failed for
// lack of space (ENOSPC, EDQUOT). The DB retries in the background and
// takes writes again once a retry succeeds; see DB.BackgroundError. Both
// the standard library's and cockroachdb's errors.Is recognise it.
var ErrNoSpace = base.ErrNoSpace

// DB is an open database. All methods are safe for concurrent use.
//
// Writes go to the WAL and the mutable memtable; a full memtable becomes
// immutable and is flushed to an L0 table by a background job, and
// background compactions keep the levels in shape. Reads see the
// memtables, newest first, and then the tables of a version.
type DB struct {
	dir  string
	opts *Options
	fs   FS
	lock io.Closer // the directory's LOCK file

	cache *cache.Cache
	// ownsCache: the DB made its block cache (no Options.BlockCache) and
	// closes it.
	ownsCache  bool
	tableCache *tableCache
	tableOpts  sstable.WriterOptions
	// closedFlag is set first thing in Close, for reads that take no lock.
	closedFlag atomic.Bool

	// commitMu serializes commits: sequence numbers, WAL order and
	// memtable switches. Lock order: commitMu before mu.
	commitMu sync.Mutex
	// visibleSeq is the largest sequence number readers may see: every
	// batch at or below it has been applied (or failed and applied
	// nothing). Batches publish in sequence order.
	visibleSeq atomic.Uint64
	publishMu  sync.Mutex
	published  *sync.Cond
	// waitingToPublish, set only by tests before they start the DB's
	// work, is called (with publishMu held: it must not block) each time
	// waitPublished waits for earlier batches, so that a test knows a
	// flush or an Ingest reached that wait.
	waitingToPublish func()

	// readState is the current read state (see loadReadState); replaced
	// under mu.
	readState atomic.Pointer[readState]
	// spareMem is the memtable last released by every holder, whose arena
	// the next memtable of its size is built in (see memTable.unref).
	spareMem atomic.Pointer[memtable.Memtable]
	// getScratch pools GetAppend's scratch (see getScratch); stripes
	// numbers new scratches round-robin over the read stripes.
	getScratch sync.Pool
	stripes    atomic.Uint32

	// mu guards the state below. It is released around I/O.
	mu struct {
		sync.Mutex
		// cond is broadcast when a flush or compaction finishes, a
		// background error is set, or the DB closes.
		cond sync.Cond

		versions *manifest.VersionSet
		mem      *memTable   // mutable
		imm      []*memTable // immutable, oldest first
		wal      *wal.Writer // the WAL of mem
		nextSeq  base.SeqNum // sequence number of the next batch

		snapshots map[*Snapshot]struct{}

		coverage coverageState

		flushing         bool // a flush job runs
		ingesting        bool // an Ingest holds off compactions
		compactions      int  // compaction jobs running
		manualCompacting bool
		// openFlush is set while Open installs the flush of the recovered
		// WALs: no compaction may start, as its half-written outputs would
		// look like leftovers to the cleanup at open.
		openFlush bool
		// bgErr is a sticky failure of a WAL, flush or manifest write:
		// writes fail with it; reads go on.
		bgErr error
		// space is the state of recovery from out-of-space failures,
		// which, unlike bgErr, go away (see background_error.go).
		space spaceState
		// idle is the idle-compaction state (compaction_idle.go).
		idle   idleState
		closed bool
	}

	// bgCtx is cancelled by Close to stop background and manual
	// compactions; bgWG counts the goroutines that must finish first.
	bgCtx    context.Context
	bgCancel context.CancelFunc
	bgWG     sync.WaitGroup

	metrics dbMetrics

	// merge calls Options.MergeOperator; mergeOperatorBound says the
	// MERGE-OPERATOR file names it (see merge.go).
	merge              merger
	mergeOperatorBound atomic.Bool
	// ingestedSeq is the largest sequence number given to an ingested
	// table since open (written under commitMu; see insertRunTombstone).
	ingestedSeq atomic.Uint64

	// iterPool recycles iteration states (see iterState).
	iterPool sync.Pool
	// lastInRangePool recycles the one-table floor's iterators
	// (last_in_range_fast.go); generalFloorsOnly, set only by tests before
	// they read, turns that path off.
	lastInRangePool   sync.Pool
	generalFloorsOnly bool
}

// checkOpenLocked returns an error if the DB is closed. d.mu must be held.
func (d *DB) checkOpenLocked(op string) error {
	if d.mu.closed {
		return errors.Wrapf(ErrClosed, "lsm: %s", op)
	}
	return nil
}
