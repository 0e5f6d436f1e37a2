package bookkeeper

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// ledgerMeta is what a ledgers index holds of a ledger.
type ledgerMeta struct {
	fenced bool
	key    []byte
	lac    []byte // the explicit LAC; nil: none
}

func (m *ledgerMeta) clone() *ledgerMeta {
	c := *m
	c.key = slices.Clone(m.key)
	c.lac = slices.Clone(m.lac)
	return &c
}

func (m *ledgerMeta) equal(o *ledgerMeta) bool {
	if m == nil || o == nil {
		return m == o
	}
	return m.fenced == o.fenced && bytes.Equal(m.key, o.key) && bytes.Equal(m.lac, o.lac) && (m.lac == nil) == (o.lac == nil)
}

func allZeros(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// metaModel models a storage's ledger metadata, upstream's
// (DbLedgerStorage's LedgerMetadataIndex and TransientLedgerInfo) or ours,
// which differ where docs/upstream.md says:
//
//   - upstream writes its ledgers index at a checkpoint only when the
//     directory's write cache has entries to write, so a restart loses the
//     changes made after the last such checkpoint; ours writes them at
//     every checkpoint and at Close;
//   - upstream keeps an explicit LAC for a ledger that does not exist in
//     memory (and answers it once the ledger is created); ours refuses it.
type metaModel struct {
	upstream bool
	mem      map[int64]*ledgerMeta
	disk     map[int64]*ledgerMeta
	dirty    [2]map[int64]bool
	purge    [2]map[int64]bool
	cached   [2]map[int64]int
	// Upstream's TransientLedgerInfo: the cached LAC (MinInt64: none) and
	// explicit LAC.
	tliLAC      map[int64]int64
	tliExplicit map[int64][]byte
}

func newMetaModel(upstream bool) *metaModel {
	m := &metaModel{upstream: upstream, mem: map[int64]*ledgerMeta{}, disk: map[int64]*ledgerMeta{},
		tliLAC: map[int64]int64{}, tliExplicit: map[int64][]byte{}}
	for d := range m.dirty {
		m.dirty[d], m.purge[d], m.cached[d] = map[int64]bool{}, map[int64]bool{}, map[int64]int{}
	}
	return m
}

func dirOf(l int64) int { return int(uint64(l) % 2) }

const noLAC = math.MinInt64

func (m *metaModel) touch(l int64) {
	m.dirty[dirOf(l)][l] = true
	delete(m.purge[dirOf(l)], l)
}

func (m *metaModel) setKey(l int64, key []byte) sAnswer {
	cur := m.mem[l]
	switch {
	case cur == nil:
		m.mem[l] = &ledgerMeta{key: slices.Clone(key)}
	case bytes.Equal(cur.key, key):
	case allZeros(cur.key):
		cur.key = slices.Clone(key)
	case !allZeros(key):
		return "!WrongMasterKey"
	}
	m.touch(l)
	return ""
}

func (m *metaModel) setFenced(l int64) sAnswer {
	cur := m.mem[l]
	switch {
	case cur == nil:
		return "!NoLedger"
	case cur.fenced:
		return "false"
	}
	cur.fenced = true
	m.touch(l)
	return "true"
}

func (m *metaModel) setLAC(l int64, lac []byte) sAnswer {
	cur := m.mem[l]
	if !m.upstream {
		if cur == nil {
			return "!NoLedger"
		}
		cur.lac = slices.Clone(lac)
		m.touch(l)
		return ""
	}
	m.tliExplicit[l] = slices.Clone(lac)
	m.raiseLAC(l, int64(binary.BigEndian.Uint64(lac[8:16])))
	if cur != nil {
		cur.lac = slices.Clone(lac)
		m.dirty[dirOf(l)][l] = true
	}
	return ""
}

// raiseLAC is TransientLedgerInfo.setLastAddConfirmed.
func (m *metaModel) raiseLAC(l, lac int64) {
	if cur, ok := m.tliLAC[l]; !ok || cur == noLAC || cur < lac {
		m.tliLAC[l] = lac
	}
}

func (m *metaModel) getLAC(l int64) sAnswer {
	cur := m.mem[l]
	if cur == nil {
		return "!NoLedger"
	}
	lac := cur.lac
	if m.upstream {
		if _, ok := m.tliLAC[l]; !ok {
			m.tliLAC[l] = noLAC
		}
		if e, ok := m.tliExplicit[l]; ok {
			lac = e
		} else if lac != nil {
			m.tliExplicit[l] = slices.Clone(lac)
			m.raiseLAC(l, int64(binary.BigEndian.Uint64(lac[8:16])))
		}
	}
	if lac == nil {
		return "null"
	}
	return sAnswer(strconv.Quote(hex.EncodeToString(lac)))
}

func (m *metaModel) fenced(l int64) sAnswer {
	if cur := m.mem[l]; cur != nil {
		return sAnswer(strconv.FormatBool(cur.fenced))
	}
	return "!NoLedger"
}

func (m *metaModel) readKey(l int64) sAnswer {
	if cur := m.mem[l]; cur != nil {
		return sAnswer(strconv.Quote(hex.EncodeToString(cur.key)))
	}
	return "!NoLedger"
}

func (m *metaModel) exists(l int64) sAnswer { return sAnswer(strconv.FormatBool(m.mem[l] != nil)) }

func (m *metaModel) list(first, last int64) []int64 {
	ids := []int64{}
	for l := range m.mem {
		if first <= 0 && last == math.MaxInt64 || first <= l && l < last {
			ids = append(ids, l)
		}
	}
	slices.Sort(ids)
	return ids
}

func (m *metaModel) add(l, lac int64) {
	m.cached[dirOf(l)][l]++
	if _, ok := m.tliLAC[l]; ok && m.upstream {
		m.raiseLAC(l, lac)
	}
}

func (m *metaModel) delete(l int64) {
	// The write cache keeps a deleted ledger's entries (skipped when it
	// is written): upstream's cache is not empty for them.
	delete(m.mem, l)
	delete(m.dirty[dirOf(l)], l)
	m.purge[dirOf(l)][l] = true
	delete(m.tliLAC, l)
	delete(m.tliExplicit, l)
}

// checkpoint is a checkpoint of every directory and the purge after it.
func (m *metaModel) checkpoint() {
	for d := range m.dirty {
		n := 0
		for _, c := range m.cached[d] {
			n += c
		}
		if n > 0 || !m.upstream {
			for l := range m.dirty[d] {
				if cur := m.mem[l]; cur != nil {
					m.disk[l] = cur.clone()
				}
			}
			clear(m.dirty[d])
			clear(m.cached[d])
		}
		for l := range m.purge[d] {
			delete(m.disk, l)
		}
		clear(m.purge[d])
	}
}

// reopen is a shutdown (a checkpoint) and an open: memory is what the
// ledgers index holds.
func (m *metaModel) reopen() {
	m.checkpoint()
	clear(m.mem)
	for l, d := range m.disk {
		m.mem[l] = d.clone()
	}
	clear(m.tliLAC)
	clear(m.tliExplicit)
	for d := range m.dirty {
		clear(m.dirty[d])
		clear(m.cached[d])
	}
}

// storageReplay replays a DbLedgerStorage trace against bookie.Storage.
// Every metadata answer of BookKeeper's must be the upstream model's and
// every one of ours our model's; every answer about entries is compared
// directly. An answer that differs must have a documented reason (see
// reason); the test fails with the others.
type storageReplay struct {
	t     *testing.T
	fs    vfs.FS
	s     *bookie.Storage
	up    *metaModel
	our   *metaModel
	diffs differences
	n     int
	// deleted: DeleteLedger was called; reborn: then SetMasterKey created
	// the ledger again (as a late request for a deleted ledger does).
	deleted map[int64]bool
	reborn  map[int64]bool
	// lost: why upstream's metadata of a ledger differs from ours.
	lost map[int64]string
	// lacFromCache: upstream answered the current lac operation from its
	// cached LAC (TransientLedgerInfo), not from the last entry.
	lacFromCache bool
	// cachedIDs: per ledger, the entry ids added since the last
	// checkpoint, in upstream's write cache.
	cachedIDs    map[int64]map[int64]bool
	undocumented []string
}

var storageKinds = map[string]error{
	"NoEntry":         bookie.ErrNoEntry,
	"NoLedger":        bookie.ErrNoLedger,
	"WrongMasterKey":  bookie.ErrWrongMasterKey,
	"InvalidArgument": bookie.ErrInvalidArgument,
}

func (r *storageReplay) open() {
	s, err := bookie.Open(&bookie.Options{
		FS:                r.fs,
		LedgerDirs:        []string{"/bookie/ledger0", "/bookie/ledger1"},
		FlushInterval:     -1,
		GCWaitTime:        -1,
		DiskCheckInterval: -1,
		LogSizeLimit:      64 << 10,
	})
	require.NoError(r.t, err)
	r.s = s
}

func replayStorageTrace(t *testing.T, path string) {
	h, ops := readTrace(t, path)
	require.Equal(t, "DbLedgerStorage", h.Trace)
	r := &storageReplay{
		t:         t,
		fs:        vfs.NewMem(),
		up:        newMetaModel(true),
		our:       newMetaModel(false),
		diffs:     differences{},
		deleted:   map[int64]bool{},
		reborn:    map[int64]bool{},
		lost:      map[int64]string{},
		cachedIDs: map[int64]map[int64]bool{},
	}
	r.open()
	defer func() { _ = r.s.Close() }()
	for i, op := range ops {
		r.n = i + 2
		r.step(op)
		r.converge(op.L)
	}
	t.Logf("%s: seed %d, %d operations replayed", filepath.Base(path), h.Seed, len(ops))
	r.diffs.log(t)
	if n := len(r.undocumented); n > 0 {
		t.Errorf("%d answers differ for no documented reason, or a model is wrong; the first:\n  %s", n,
			strings.Join(r.undocumented[:min(n, 40)], "\n  "))
	}
}

// converge forgets why a ledger's metadata differs once both models agree.
func (r *storageReplay) converge(l int64) {
	if r.up.mem[l].equal(r.our.mem[l]) {
		if e, ok := r.up.tliExplicit[l]; !ok || r.our.mem[l] != nil && bytes.Equal(e, r.our.mem[l].lac) {
			delete(r.lost, l)
		}
	}
}

// sAnswer is an answer as text: a JSON value, "" for none, or "!" and an
// error kind.
type sAnswer string

// canonical re-encodes a JSON value with sorted keys and exact integers.
func canonical(b []byte) sAnswer {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		panic(err)
	}
	out, _ := json.Marshal(v)
	return sAnswer(out)
}

func bkStorageAnswer(op traceOp) sAnswer {
	if op.Exc != "" {
		return sAnswer("!" + upstreamKind(op.Exc))
	}
	if len(op.Ret) == 0 {
		return ""
	}
	return canonical(op.Ret)
}

func (r *storageReplay) ours(v any, err error, what string) sAnswer {
	r.t.Helper()
	if err != nil {
		return sAnswer("!" + errKind(r.t, err, storageKinds, what))
	}
	if v == nil {
		return ""
	}
	b, _ := json.Marshal(v)
	return canonical(b)
}

func entryAnswer(l, e int64, payload []byte) map[string]any {
	h := sha256.New()
	var ids [16]byte
	binary.BigEndian.PutUint64(ids[:8], uint64(l))
	binary.BigEndian.PutUint64(ids[8:], uint64(e))
	h.Write(ids[:])
	h.Write(payload)
	return map[string]any{"size": 16 + len(payload), "sha256": hex.EncodeToString(h.Sum(nil)), "id": e}
}

func (r *storageReplay) fail(format string, args ...any) {
	r.undocumented = append(r.undocumented, fmt.Sprintf("line %d, ", r.n)+fmt.Sprintf(format, args...))
}

// compareModeled checks both answers against their models, and a
// difference between them for its reason.
func (r *storageReplay) compareModeled(op traceOp, bk, upWant, ours, ourWant sAnswer) {
	if bk != upWant {
		r.fail("%s(%d): BookKeeper answered %s, the upstream model %s", op.Op, op.L, bk, upWant)
		return
	}
	if ours != ourWant {
		r.fail("%s(%d): bookie answered %s, its model %s", op.Op, op.L, ours, ourWant)
		return
	}
	r.compare(op, bk, ours)
}

// compare checks an answer of ours against BookKeeper's.
func (r *storageReplay) compare(op traceOp, bk, ours sAnswer) {
	if bk == ours {
		return
	}
	why := r.reason(op, bk, ours)
	if why == "" {
		r.fail("%s(%d, %d): BookKeeper answered %s, bookie %s", op.Op, op.L, op.E, bk, ours)
		return
	}
	r.diffs[why]++
}

const (
	whyDeleted   = "a deleted ledger is gone at once (upstream serves its indexed entries until the purge, and its read cache after)"
	whyLost      = "a restart keeps metadata changed after the last checkpoint that wrote entries in the ledger's directory (upstream's checkpoint of an empty write cache skips its ledgers index)"
	whyLAC       = "an explicit LAC for a ledger that does not exist is refused (upstream keeps it in memory and answers it once the ledger is created)"
	whyReborn    = "a deleted ledger created again starts empty (upstream serves the entries its write cache held at the deletion, and its purge deletes the entries written since)"
	whyCacheLast = "the last entry is the greatest id of the ledger's (upstream's getLastEntry answers the write cache's greatest when the cache holds an entry of the ledger, even below one already checkpointed, as after a client re-sends an entry)"
	whyLACache   = "the storage keeps no LAC: the last add confirmed is the last entry's (upstream's storage caches one per ledger, raised by adds and explicit LACs, so that after a restart an explicit LAC read first sets it below the stored entries')"
)

// reason names the documented difference that explains an answer of ours
// that is not BookKeeper's, or "".
func (r *storageReplay) reason(op traceOp, bk, ours sAnswer) string {
	l := op.L
	switch {
	case op.Op == "lac" && r.lacFromCache:
		return whyLACache
	case (op.Op == "get" && op.E == bookie.LastEntry || op.Op == "lac") && r.cacheLast(l, bk, ours):
		return whyCacheLast
	case r.deleted[l] && ours == "!NoLedger":
		return whyDeleted
	case r.reborn[l] && (op.Op == "get" || op.Op == "lac"):
		return whyReborn
	case r.lost[l] != "":
		return r.lost[l]
	}
	return ""
}

// cacheLast reports whether BookKeeper answered the last entry (or its
// LAC) of its write cache for ledger l, below ours.
func (r *storageReplay) cacheLast(l int64, bk, ours sAnswer) bool {
	ids := r.cachedIDs[l]
	if len(ids) == 0 || bk[0] == '!' || ours[0] == '!' {
		return false
	}
	last := int64(math.MinInt64)
	for id := range ids {
		last = max(last, id)
	}
	var b, o int64
	if bk[0] == '{' {
		var be, oe struct{ ID int64 }
		if json.Unmarshal([]byte(bk), &be) != nil || json.Unmarshal([]byte(ours), &oe) != nil {
			return false
		}
		b, o = be.ID, oe.ID
	} else {
		// LACs: an entry's is its id - 1.
		var err error
		if b, err = strconv.ParseInt(string(bk), 10, 64); err != nil {
			return false
		}
		if o, err = strconv.ParseInt(string(ours), 10, 64); err != nil {
			return false
		}
		b, o = b+1, o+1
	}
	return b == last && o > b
}

func (r *storageReplay) step(op traceOp) {
	t := r.t
	bk := bkStorageAnswer(op)
	l := op.L
	switch op.Op {
	case "key":
		key, err := hex.DecodeString(op.Key)
		require.NoError(t, err)
		ours := r.ours(nil, r.s.SetMasterKey(l, key), "SetMasterKey")
		r.compareModeled(op, bk, r.up.setKey(l, key), ours, r.our.setKey(l, key))
		if r.deleted[l] && ours == "" {
			r.reborn[l] = true
			delete(r.deleted, l)
		}
	case "add":
		b, err := hex.DecodeString(op.Bytes)
		require.NoError(t, err)
		require.GreaterOrEqual(t, len(b), 24)
		err = r.s.AddEntry(l, op.E, b[16:])
		lac := int64(binary.BigEndian.Uint64(b[16:24]))
		r.up.add(l, lac)
		r.our.add(l, lac)
		if r.cachedIDs[l] == nil {
			r.cachedIDs[l] = map[int64]bool{}
		}
		r.cachedIDs[l][op.E] = true
		r.compare(op, bk, r.ours(maybe(err == nil, op.E), err, "AddEntry"))
	case "get":
		var ours sAnswer
		if op.E == bookie.LastEntry {
			id, p, err := r.s.GetLastEntry(l)
			ours = r.ours(maybe(err == nil, func() any { return entryAnswer(l, id, p) }), err, "GetLastEntry")
		} else {
			p, err := r.s.GetEntry(l, op.E)
			ours = r.ours(maybe(err == nil, func() any { return entryAnswer(l, op.E, p) }), err, "GetEntry")
		}
		r.compare(op, bk, ours)
	case "lac":
		// Ours: the last entry's LAC (the storage keeps none).
		_, p, err := r.s.GetLastEntry(l)
		var v any
		if err == nil {
			require.GreaterOrEqual(t, len(p), 8, "line %d", r.n)
			v = int64(binary.BigEndian.Uint64(p))
		}
		ours := r.ours(v, err, "GetLastEntry")
		// Upstream's: the cached LAC, else the last entry's, cached.
		r.lacFromCache = false
		if r.up.mem[l] != nil {
			if cur, ok := r.up.tliLAC[l]; ok && cur != noLAC {
				r.lacFromCache = true
				if want := sAnswer(strconv.FormatInt(cur, 10)); bk != want {
					r.fail("lac(%d): BookKeeper answered %s, its cached LAC is %s", l, bk, want)
				}
			} else if bk[0] != '!' {
				v, err := strconv.ParseInt(string(bk), 10, 64)
				require.NoError(t, err)
				r.up.raiseLAC(l, v)
			}
		} else if bk != "!NoLedger" {
			r.fail("lac(%d): BookKeeper answered %s for a ledger it does not hold", l, bk)
		}
		r.compare(op, bk, ours)
	case "fence":
		changed, err := r.s.SetFenced(l)
		r.compareModeled(op, bk, r.up.setFenced(l), r.ours(maybe(err == nil, changed), err, "SetFenced"), r.our.setFenced(l))
	case "fenced", "readkey", "getlac":
		info, ok, err := r.s.LedgerInfo(l)
		require.NoError(t, err)
		var ours sAnswer
		switch {
		case !ok || !info.Exists:
			ours = "!NoLedger"
		case op.Op == "fenced":
			ours = sAnswer(strconv.FormatBool(info.Fenced))
		case op.Op == "readkey":
			ours = sAnswer(strconv.Quote(hex.EncodeToString(info.MasterKey)))
		case info.ExplicitLAC == nil:
			ours = "null"
		default:
			ours = sAnswer(strconv.Quote(hex.EncodeToString(info.ExplicitLAC)))
		}
		var up, our sAnswer
		switch op.Op {
		case "fenced":
			up, our = r.up.fenced(l), r.our.fenced(l)
		case "readkey":
			up, our = r.up.readKey(l), r.our.readKey(l)
		default:
			up, our = r.up.getLAC(l), r.our.getLAC(l)
		}
		r.compareModeled(op, bk, up, ours, our)
	case "setlac":
		lac, err := hex.DecodeString(op.LAC)
		require.NoError(t, err)
		ours := r.ours(nil, r.s.SetExplicitLAC(l, lac), "SetExplicitLAC")
		up, our := r.up.setLAC(l, lac), r.our.setLAC(l, lac)
		if up != our {
			r.lost[l] = whyLAC
		}
		r.compareModeled(op, bk, up, ours, our)
	case "delete":
		_, err := r.s.DeleteLedger(l)
		r.up.delete(l)
		r.our.delete(l)
		r.deleted[l] = true
		r.compare(op, bk, r.ours(nil, err, "DeleteLedger"))
	case "flush":
		require.NoError(t, r.s.Checkpoint(), "line %d", r.n)
		require.NoError(t, r.s.Purge(), "line %d", r.n)
		r.up.checkpoint()
		r.our.checkpoint()
		clear(r.cachedIDs)
		require.Equal(t, sAnswer(""), bk, "line %d: BookKeeper's flush", r.n)
	case "exists":
		ok, err := r.s.LedgerExists(l)
		r.compareModeled(op, bk, r.up.exists(l), r.ours(ok, err, "LedgerExists"), r.our.exists(l))
	case "list":
		ids, err := r.s.ActiveLedgersInRange(op.First, op.Last)
		require.NoError(t, err)
		if ids == nil {
			ids = []int64{}
		}
		r.compareList(op, bk, r.ours(ids, nil, ""))
	case "reopen":
		require.NoError(t, r.s.Close(), "line %d", r.n)
		clear(r.cachedIDs)
		r.up.reopen()
		r.our.reopen()
		for l := range r.our.mem {
			if !r.up.mem[l].equal(r.our.mem[l]) {
				r.lost[l] = whyLost
			}
		}
		r.open()
		require.Equal(t, sAnswer(""), bk, "line %d: BookKeeper's reopen", r.n)
	default:
		t.Fatalf("line %d: unknown operation %q", r.n, op.Op)
	}
}

// compareList compares two ledger listings with the models'; where
// BookKeeper's and ours differ, every ledger listed by one side only must
// have a documented reason.
func (r *storageReplay) compareList(op traceOp, bk, ours sAnswer) {
	upWant, _ := json.Marshal(r.up.list(op.First, op.Last))
	ourWant, _ := json.Marshal(r.our.list(op.First, op.Last))
	if bk != canonical(upWant) {
		r.fail("list(%d, %d): BookKeeper answered %s, the upstream model %s", op.First, op.Last, bk, upWant)
		return
	}
	if ours != canonical(ourWant) {
		r.fail("list(%d, %d): bookie answered %s, its model %s", op.First, op.Last, ours, ourWant)
		return
	}
	if bk == ours {
		return
	}
	var a, b []int64
	require.NoError(r.t, json.Unmarshal([]byte(bk), &a))
	require.NoError(r.t, json.Unmarshal([]byte(ours), &b))
	for _, id := range append(a, b...) {
		if slices.Contains(a, id) == slices.Contains(b, id) {
			continue
		}
		why := r.lost[id]
		if why == "" {
			r.fail("list(%d, %d): ledger %d listed by one side only (BookKeeper %s, bookie %s)", op.First, op.Last, id, bk, ours)
			continue
		}
		r.diffs["a ledger listed by one side: "+why]++
	}
}

// maybe returns v if ok: v is a value, or a func computing it.
func maybe(ok bool, v any) any {
	if !ok {
		return nil
	}
	if f, isFunc := v.(func() any); isFunc {
		return f()
	}
	return v
}

// TestDbLedgerStorageTrace replays the committed trace of BookKeeper's
// DbLedgerStorage (testdata/traces) against package bookie's Storage.
func TestDbLedgerStorageTrace(t *testing.T) {
	replayStorageTrace(t, filepath.Join("testdata", "traces", "dbledgerstorage-seed1.jsonl"))
}

// TestDbLedgerStorageTraceFresh has BookKeeper write traces with new seeds
// and replays them.
func TestDbLedgerStorageTraceFresh(t *testing.T) {
	p := Build(t)
	seed := testSeed(t)
	for i := range int64(2) {
		s := strconv.FormatInt(seed+i, 10)
		t.Run("seed"+s, func(t *testing.T) {
			trace := filepath.Join(t.TempDir(), "trace.jsonl")
			p.Run(t, "StorageTrace", "--seed", s, "--dir", filepath.Join(scratchDir(t), "bookie"), "--out", trace)
			replayStorageTrace(t, trace)
		})
	}
}
