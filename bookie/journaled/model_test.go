package journaled

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/internal/killtest"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

var (
	modelSteps = flag.Int("model-steps", 1500, "steps of TestModel (raise for a longer run)")
	modelSeed  = flag.Int64("model-seed", 0, "replay TestModel's seed")
)

// modelLedger is what the model says of a ledger.
type modelLedger struct {
	entries map[int64][]byte
	fenced  bool
	key     []byte
	lac     []byte
}

// TestModel runs random adds, rewrites, deletions (and new lives after
// them), master keys, fences, explicit LACs, checkpoints of the whole
// storage and of single directories (partial checkpoints: the recorded
// mark lags the directory that went ahead), purges, clean restarts and
// power losses (unsynced bytes dropped or torn) against a map, with the
// background checkpoints of a small write cache and a short flush
// interval running on their own. Every operation is acknowledged before
// the next, so after each restart the storage must be the model exactly:
// every entry, key, fence and LAC, no deleted ledger, no entry of an
// earlier life. The seed is logged; -model-seed replays its choices (the
// background checkpoints' timing is the scheduler's).
func TestModel(t *testing.T) {
	seed := killtest.Seed(t, *modelSeed, "model-seed")
	rng := rand.New(rand.NewSource(seed))
	env := newTestEnv(1+rng.Intn(3), 1+rng.Intn(2))
	env.tweak = func(o *Options) {
		o.Storage.WriteCacheSize = int64(len(env.ledgerDirs)) * 64 << 10 // full caches checkpoint on their own
		o.Storage.FlushInterval = time.Duration(1+rng.Intn(20)) * time.Millisecond
		o.Journal.MaxFileSize = 4 << 10
	}
	t.Logf("%d ledger directories, %d journals", len(env.ledgerDirs), len(env.journalDirs))
	model := map[int64]*modelLedger{}
	s := env.open(t)
	defer func() { _ = s.Close() }()

	const ledgers, entries = 12, 24
	restarts, crashes := 0, 0
	for step := range *modelSteps {
		l := int64(rng.Intn(ledgers))
		m := model[l]
		switch op := rng.Intn(100); {
		case op < 60:
			e := int64(rng.Intn(entries))
			p := bytes.Repeat(fmt.Appendf(nil, "%d/%d@%d;", l, e, step), 1+rng.Intn(40))
			require.NoError(t, s.AddEntry(l, e, p), "step %d", step)
			if m == nil {
				m = &modelLedger{entries: map[int64][]byte{}}
				model[l] = m
			}
			m.entries[e] = p
		case op < 66:
			existed, err := s.DeleteLedger(l)
			require.NoError(t, err, "step %d", step)
			require.Equal(t, m != nil, existed, "step %d: ledger %d", step, l)
			delete(model, l)
		case op < 70 && m != nil:
			_, err := s.SetFenced(l)
			require.NoError(t, err, "step %d", step)
			m.fenced = true
		case op < 73:
			key := fmt.Appendf(nil, "key-%d", l)
			if m != nil && m.key != nil {
				key = m.key
			}
			require.NoError(t, s.SetMasterKey(l, key), "step %d", step)
			if m == nil {
				m = &modelLedger{entries: map[int64][]byte{}}
				model[l] = m
			}
			m.key = key
		case op < 76 && m != nil:
			lac := fmt.Appendf(nil, "lac-%d", step)
			require.NoError(t, s.SetExplicitLAC(l, lac), "step %d", step)
			m.lac = lac
		case op < 82:
			require.NoError(t, s.Checkpoint(), "step %d", step)
		case op < 88:
			dirs := s.Dirs()
			require.NoError(t, dirs[rng.Intn(len(dirs))].Checkpoint(), "step %d", step)
		case op < 91:
			require.NoError(t, s.Purge(), "step %d", step)
		case op < 93:
			require.NoError(t, s.Close(), "step %d", step)
			s = env.open(t)
			restarts++
			checkModel(t, s, model, ledgers, entries, fmt.Sprintf("step %d, after a restart", step))
		case op < 97:
			torn := int64(0)
			if rng.Intn(2) == 0 {
				torn = rng.Int63()
			}
			env.crash(t, s, torn)
			s = env.open(t)
			crashes++
			checkModel(t, s, model, ledgers, entries, fmt.Sprintf("step %d, after a power loss (torn tails: seed %d)", step, torn))
		}
	}
	t.Logf("%d steps, %d restarts, %d power losses", *modelSteps, restarts, crashes)
	checkModel(t, s, model, ledgers, entries, "the end")
}

func checkModel(t *testing.T, s *Storage, model map[int64]*modelLedger, ledgers, entries int, when string) {
	t.Helper()
	for l := range int64(ledgers) {
		m := model[l]
		info, ok, err := s.LedgerInfo(l)
		require.NoError(t, err)
		if m == nil {
			require.False(t, ok && info.Exists, "%s: ledger %d exists (%+v); the model has it deleted or never written", when, l, info)
			continue
		}
		require.True(t, ok && info.Exists, "%s: ledger %d is missing", when, l)
		require.Equal(t, m.fenced, info.Fenced, "%s: ledger %d fenced", when, l)
		require.Equal(t, string(m.key), string(info.MasterKey), "%s: ledger %d master key", when, l)
		require.Equal(t, string(m.lac), string(info.ExplicitLAC), "%s: ledger %d explicit LAC", when, l)
		for e := range int64(entries) {
			got, err := s.GetEntry(l, e)
			want, has := m.entries[e]
			if !has {
				require.True(t, errors.Is(err, bookie.ErrNoEntry), "%s: entry %d/%d: the model has none, the storage %q %v", when, l, e, got, err)
				continue
			}
			require.NoError(t, err, "%s: entry %d/%d", when, l, e)
			require.Equal(t, string(want), string(got), "%s: entry %d/%d", when, l, e)
		}
	}
}
