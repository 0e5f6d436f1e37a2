package bookkeeper

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/stretchr/testify/require"
)

// indexKey is a location key as both indexes order it: the ledger and
// entry ids as unsigned big-endian words.
type indexKey struct{ l, e int64 }

func (k indexKey) less(o indexKey) bool {
	if k.l != o.l {
		return uint64(k.l) < uint64(o.l)
	}
	return uint64(k.e) < uint64(o.e)
}

// upstreamIndex models BookKeeper's EntryLocationIndex: every write
// stored (any ids, any location); getLastEntryInLedger the greatest key
// strictly below (L, MaxInt64), if it is L's, and IllegalArgumentException
// for a negative ledger id (its deleted-ledgers set takes none), as delete
// does; the purge deletes [(L, 0), (L, MaxInt64)).
type upstreamIndex struct {
	locs    map[indexKey]int64
	deleted map[int64]bool
}

func (u *upstreamIndex) put(l, e, loc int64) { u.locs[indexKey{l, e}] = loc }

func (u *upstreamIndex) get(l, e int64) answer { return answer{ret: u.locs[indexKey{l, e}]} }

func (u *upstreamIndex) last(l int64) answer {
	if l < 0 {
		return answer{err: "InvalidArgument"}
	}
	if u.deleted[l] {
		return answer{err: "NoEntry"}
	}
	bound := indexKey{l, math.MaxInt64}
	var best indexKey
	found := false
	for k := range u.locs {
		if k.less(bound) && (!found || best.less(k)) {
			best, found = k, true
		}
	}
	if !found || best.l != l {
		return answer{err: "NoEntry"}
	}
	return answer{ret: best.e}
}

func (u *upstreamIndex) delete(l int64) answer {
	if l < 0 {
		return answer{err: "InvalidArgument"}
	}
	u.deleted[l] = true
	return answer{}
}

func (u *upstreamIndex) purge() {
	for k := range u.locs {
		if u.deleted[k.l] && k.e >= 0 && k.e < math.MaxInt64 {
			delete(u.locs, k)
		}
	}
	clear(u.deleted)
}

// ourIndex models package entrylocation: negative ledger ids and
// locations of 0 or less refused (UpdateLocations refuses the whole call
// for one bad element); the last entry the greatest of [0, MaxInt64]; the
// purge deletes every key of the ledger; Batch.Flush empties the batch.
type ourIndex struct {
	locs    map[indexKey]int64
	deleted map[int64]bool
}

func validWrite(l, loc int64) bool { return l >= 0 && loc > 0 }

func (o *ourIndex) last(l int64) answer {
	if l < 0 {
		return answer{err: "InvalidArgument"}
	}
	if o.deleted[l] {
		return answer{err: "NoEntry"}
	}
	best, found := int64(-1), false
	for k := range o.locs {
		if k.l == l && k.e >= 0 && k.e >= best {
			best, found = k.e, true
		}
	}
	if !found {
		return answer{err: "NoEntry"}
	}
	return answer{ret: best}
}

func (o *ourIndex) get(l, e int64) answer {
	if l < 0 {
		return answer{err: "InvalidArgument"}
	}
	return answer{ret: o.locs[indexKey{l, e}]}
}

func (o *ourIndex) purge() {
	for k := range o.locs {
		if o.deleted[k.l] {
			delete(o.locs, k)
		}
	}
	clear(o.deleted)
}

// indexReplay replays an EntryLocationIndex trace against an
// entrylocation.Index. Every BookKeeper answer must be the upstream
// model's, every answer of ours our model's; where the models disagree,
// the difference is one docs/upstream.md lists, and it is counted under
// its reason. So an answer of ours that differs from BookKeeper's for any
// other reason fails the test, as does a model that does not describe
// BookKeeper.
type indexReplay struct {
	t     *testing.T
	ix    *entrylocation.Index
	fs    lsm.FS
	up    upstreamIndex
	our   ourIndex
	diffs differences
	// why holds, per key, the reason its value differs between the
	// models (a refused write, a purge upstream's range does not cover, a
	// second flush).
	why map[indexKey]string
	n   int
}

var indexKinds = map[string]error{"NoEntry": entrylocation.ErrNoEntry, "InvalidArgument": entrylocation.ErrInvalidArgument}

func (r *indexReplay) open() {
	o := &entrylocation.Options{Engine: &lsm.Options{
		FS:                             r.fs,
		WriteBufferSize:                64 << 10,
		TargetFileSizeBase:             64 << 10,
		BlockSize:                      1 << 10,
		Level0FileNumCompactionTrigger: 2,
		MaxBytesForLevelBase:           1 << 20,
	}}
	ix, err := entrylocation.Open("/index", o)
	require.NoError(r.t, err)
	r.ix = ix
}

func replayIndexTrace(t *testing.T, path string) {
	h, ops := readTrace(t, path)
	require.Equal(t, "EntryLocationIndex", h.Trace)
	r := &indexReplay{
		t:     t,
		fs:    lsm.NewMemFS(),
		up:    upstreamIndex{locs: map[indexKey]int64{}, deleted: map[int64]bool{}},
		our:   ourIndex{locs: map[indexKey]int64{}, deleted: map[int64]bool{}},
		diffs: differences{},
		why:   map[indexKey]string{},
	}
	r.open()
	defer func() { _ = r.ix.Close() }()
	for i, op := range ops {
		r.n = i + 2
		r.step(op)
	}
	t.Logf("%s: seed %d, %d operations replayed", filepath.Base(path), h.Seed, len(ops))
	r.diffs.log(t)
}

// compare checks BookKeeper's answer against the upstream model, ours
// against ours, and, where the models differ, that the difference has a
// documented reason (reason returns it, or "" if none applies).
func (r *indexReplay) compare(what string, bk, upWant, ours, ourWant answer, reason func() string) {
	t := r.t
	t.Helper()
	require.Equal(t, upWant, bk, "line %d, %s: BookKeeper answered %v, the upstream model %v", r.n, what, bk, upWant)
	require.Equal(t, ourWant, ours, "line %d, %s: entrylocation answered %v, its model %v", r.n, what, ours, ourWant)
	if bk == ours {
		return
	}
	why := reason()
	require.NotEmpty(t, why, "line %d, %s: BookKeeper answered %v, entrylocation %v, for no documented reason", r.n, what, bk, ours)
	r.diffs[why]++
}

func (r *indexReplay) bkAnswer(op traceOp) answer {
	if op.Exc != "" {
		return answer{err: upstreamKind(op.Exc)}
	}
	var v int64
	if len(op.Ret) > 0 && op.Ret[0] != '[' {
		require.NoError(r.t, json.Unmarshal(op.Ret, &v), "line %d", r.n)
	}
	return answer{ret: v}
}

// write applies one location write to both models; bad reports a write
// ours refuses.
func (r *indexReplay) write(l, e, loc int64, refusedByUs bool) {
	k := indexKey{l, e}
	r.up.put(l, e, loc)
	if refusedByUs {
		if l >= 0 {
			r.why[k] = "a write of a location <= 0 refused (upstream stores it)"
		}
		return
	}
	r.our.locs[k] = loc
	delete(r.why, k)
}

// same reports whether both models hold k with one location, or neither
// holds it.
func (r *indexReplay) same(k indexKey) bool {
	u, uok := r.up.locs[k]
	o, ook := r.our.locs[k]
	return uok == ook && u == o
}

func (r *indexReplay) getReason(l, e int64) func() string {
	return func() string {
		if l < 0 {
			return "a negative ledger id refused (upstream's getLocation takes it)"
		}
		return r.why[indexKey{l, e}]
	}
}

func (r *indexReplay) step(op traceOp) {
	t := r.t
	bk := r.bkAnswer(op)
	okAnswer := answer{}
	switch op.Op {
	case "add":
		err := r.ix.AddLocation(op.L, op.E, op.Loc)
		ours := answer{err: errKind(t, err, indexKinds, "AddLocation")}
		valid := validWrite(op.L, op.Loc)
		ourWant := okAnswer
		if !valid {
			ourWant = answer{err: "InvalidArgument"}
		}
		r.compare("addLocation", bk, okAnswer, ours, ourWant, func() string { return "a write refused: negative ledger id or location <= 0" })
		r.write(op.L, op.E, op.Loc, !valid)
	case "batch", "batch2":
		b := r.ix.NewBatch()
		for _, a := range op.Adds {
			err := b.AddLocation(a[0], a[1], a[2])
			valid := validWrite(a[0], a[2])
			if valid {
				require.NoError(t, err, "line %d: Batch.AddLocation%v", r.n, a)
			} else {
				require.ErrorIs(t, err, entrylocation.ErrInvalidArgument, "line %d: Batch.AddLocation%v", r.n, a)
			}
			r.write(a[0], a[1], a[2], !valid)
		}
		require.NoError(t, b.Flush(), "line %d", r.n)
		if op.Op == "batch2" {
			m := op.Mid
			err := r.ix.AddLocation(m[0], m[1], m[2])
			valid := validWrite(m[0], m[2])
			if !valid {
				require.ErrorIs(t, err, entrylocation.ErrInvalidArgument, "line %d", r.n)
			} else {
				require.NoError(t, err, "line %d", r.n)
			}
			r.write(m[0], m[1], m[2], !valid)
			require.NoError(t, b.Flush(), "line %d", r.n)
			// Upstream's second flush writes the batch again: its
			// locations override the one written in between.
			for _, a := range op.Adds {
				k := indexKey{a[0], a[1]}
				r.up.put(a[0], a[1], a[2])
				if !r.same(k) && a[0] >= 0 {
					r.why[k] = "a batch flushed twice (Batch.Flush empties the batch; upstream's writes it again)"
				}
			}
		}
		require.NoError(t, b.Close(), "line %d", r.n)
		require.Equal(t, okAnswer, bk, "line %d: BookKeeper's %s", r.n, op.Op)
	case "update":
		locs := make([]entrylocation.EntryLocation, len(op.Locs))
		valid := true
		for i, a := range op.Locs {
			locs[i] = entrylocation.EntryLocation{LedgerID: a[0], EntryID: a[1], Location: a[2]}
			valid = valid && validWrite(a[0], a[2])
		}
		err := r.ix.UpdateLocations(locs)
		ourWant := okAnswer
		if !valid {
			ourWant = answer{err: "InvalidArgument"}
		}
		r.compare("updateLocations", bk, okAnswer, answer{err: errKind(t, err, indexKinds, "UpdateLocations")}, ourWant,
			func() string { return "updateLocations refused whole: a negative ledger id or location <= 0 in it" })
		for _, a := range op.Locs {
			r.write(a[0], a[1], a[2], !valid)
			if !valid && a[0] >= 0 {
				r.why[indexKey{a[0], a[1]}] = "updateLocations refused whole: a negative ledger id or location <= 0 in it"
			}
		}
	case "get":
		loc, err := r.ix.GetLocation(op.L, op.E)
		ours := answer{ret: loc, err: errKind(t, err, indexKinds, "GetLocation")}
		r.compare("getLocation"+ids(op.L, op.E), bk, r.up.get(op.L, op.E), ours, r.our.get(op.L, op.E), r.getReason(op.L, op.E))
	case "scan":
		var pairs [][2]int64
		require.NoError(t, json.Unmarshal(op.Ret, &pairs), "line %d", r.n)
		for _, p := range pairs {
			loc, err := r.ix.GetLocation(op.L, p[0])
			ours := answer{ret: loc, err: errKind(t, err, indexKinds, "GetLocation")}
			r.compare("getLocation"+ids(op.L, p[0]), answer{ret: p[1]}, r.up.get(op.L, p[0]), ours, r.our.get(op.L, p[0]), r.getReason(op.L, p[0]))
		}
	case "last":
		e, err := r.ix.GetLastEntryInLedger(op.L)
		ours := answer{ret: e, err: errKind(t, err, indexKinds, "GetLastEntryInLedger")}
		if ours.err != "" {
			ours.ret = 0
		}
		r.compare("getLastEntryInLedger("+strconv.FormatInt(op.L, 10)+")", bk, r.up.last(op.L), ours, r.our.last(op.L), func() string {
			// Ours holds a subset of upstream's keys: ours answers a
			// greater id only when it is MaxInt64, which upstream's probe
			// skips; upstream answers a key ours does not hold (or holds
			// with another location) for that key's reason.
			if ours.err == "" && ours.ret == math.MaxInt64 {
				return "getLastEntryInLedger sees entry MaxInt64 (upstream's probe, below (L, MaxInt64), does not)"
			}
			if bk.err == "" {
				if why := r.why[indexKey{op.L, bk.ret}]; why != "" {
					return "getLastEntryInLedger answers a key that differs: " + why
				}
			}
			return ""
		})
	case "delete":
		err := r.ix.Delete(op.L)
		ours := answer{err: errKind(t, err, indexKinds, "Delete")}
		upWant := r.up.delete(op.L)
		ourWant := okAnswer
		if op.L < 0 {
			ourWant = answer{err: "InvalidArgument"}
		} else {
			r.our.deleted[op.L] = true
		}
		r.compare("delete", bk, upWant, ours, ourWant, func() string { return "" })
	case "purge":
		require.NoError(t, r.ix.RemoveOffsetFromDeletedLedgers(), "line %d", r.n)
		for k := range r.up.locs {
			if r.up.deleted[k.l] && (k.e < 0 || k.e == math.MaxInt64) {
				r.why[k] = "the purge removes entry MaxInt64 and negative entry ids (upstream's range leaves them)"
			}
		}
		r.up.purge()
		r.our.purge()
		for k := range r.why {
			if r.same(k) {
				delete(r.why, k)
			}
		}
		require.Equal(t, okAnswer, bk, "line %d: BookKeeper's purge", r.n)
	case "compact":
		require.NoError(t, r.ix.Compact(context.Background()), "line %d", r.n)
		require.Equal(t, okAnswer, bk, "line %d: BookKeeper's compact", r.n)
	case "reopen":
		require.NoError(t, r.ix.Close(), "line %d", r.n)
		r.open()
		clear(r.up.deleted)
		clear(r.our.deleted)
		require.Equal(t, okAnswer, bk, "line %d: BookKeeper's reopen", r.n)
	default:
		t.Fatalf("line %d: unknown operation %q", r.n, op.Op)
	}
}

func ids(l, e int64) string {
	return "(" + strconv.FormatInt(l, 10) + ", " + strconv.FormatInt(e, 10) + ")"
}

// TestEntryLocationTrace replays the committed trace of BookKeeper's
// EntryLocationIndex (testdata/traces) against package entrylocation.
func TestEntryLocationTrace(t *testing.T) {
	replayIndexTrace(t, filepath.Join("testdata", "traces", "entrylocation-seed1.jsonl"))
}

// TestEntryLocationTraceFresh has BookKeeper write traces with new seeds
// and replays them.
func TestEntryLocationTraceFresh(t *testing.T) {
	p := Build(t)
	seed := testSeed(t)
	for i := range int64(2) {
		s := strconv.FormatInt(seed+i, 10)
		t.Run("seed"+s, func(t *testing.T) {
			dir := t.TempDir()
			trace := filepath.Join(dir, "trace.jsonl")
			p.Run(t, "IndexTrace", "--seed", s, "--dir", filepath.Join(scratchDir(t), "index"), "--out", trace)
			replayIndexTrace(t, trace)
		})
	}
}
