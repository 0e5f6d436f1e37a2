package httpapi

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var (
	modelSeed = flag.Uint64("httpapi.seed", 1, "seed of TestModel")
	modelOps  = flag.Int("httpapi.ops", 400, "operations of TestModel")
)

// compactionModel is what the Service should report for each directory.
type compactionModel struct {
	compacting []bool
	counter    []int64
	outcome    []string
}

// TestModel drives the Service with random requests (valid, malformed,
// unauthenticated) and compaction endings, and checks every answer, the
// compaction state and gc_details against a model.
func TestModel(t *testing.T) {
	const token = "tok"
	paths := []string{"/d0/current/locations", "/d1/current/locations", "/d2/current/locations"}
	fakes := make([]*fakeIndex, len(paths))
	for i, p := range paths {
		fakes[i] = newFakeIndex(p)
	}
	s := testService(t, func(o *Options) { o.AuthToken = token }, fakes...)
	m := compactionModel{
		compacting: make([]bool, len(paths)),
		counter:    make([]int64, len(paths)),
		outcome:    make([]string, len(paths)),
	}
	rng := rand.New(rand.NewPCG(*modelSeed, 0))
	auth := []string{"Authorization", "Bearer " + token}
	pathList := "[" + strings.Join(paths, ", ") + "]"

	// subset picks some directories (maybe none), in random order.
	subset := func() []int {
		var idx []int
		for _, i := range rng.Perm(len(paths)) {
			if rng.IntN(2) == 0 {
				idx = append(idx, i)
			}
		}
		return idx
	}
	names := func(idx []int) []string {
		var out []string
		for _, i := range idx {
			out = append(out, paths[i])
		}
		return out
	}
	// waitStopped waits until the Service reports directory i idle.
	waitStopped := func(i int) {
		eventually(t, "directory stops", func() bool { return !compactionState(t, s)[paths[i]] })
	}

	for op := range *modelOps {
		ctx := fmt.Sprintf("op %d (seed %d)", op, *modelSeed)
		switch rng.IntN(6) {
		case 0, 1: // PUT
			idx := subset()
			var fields []string
			flagKind := rng.IntN(6)
			switch flagKind {
			case 0:
				fields = append(fields, `"entryLocationRocksDBCompact":true`)
			case 1:
				fields = append(fields, `"entryLocationRocksDBCompact":"true"`)
			case 2:
				fields = append(fields, `"entryLocationRocksDBCompact":false`)
			case 3: // missing
			case 4:
				fields = append(fields, `"entryLocationRocksDBCompact":"maybe"`)
			case 5:
				fields = append(fields, `"entryLocationRocksDBCompact":true`)
			}
			locations := strings.Join(names(idx), ",")
			invalidPath := rng.IntN(8) == 0
			if invalidPath {
				locations += ",/not/a/dir"
			}
			asArray := rng.IntN(3) == 0
			if locations != "" {
				if asArray {
					b, _ := json.Marshal(strings.Split(locations, ","))
					fields = append(fields, `"entryLocations":`+string(b))
				} else {
					fields = append(fields, `"entryLocations":`+jsonString(locations))
				}
			}
			body := "{" + strings.Join(fields, ",") + "}"
			malformed := rng.IntN(10) == 0
			if malformed {
				body = body[:len(body)-1]
			}
			unauthenticated := rng.IntN(10) == 0
			var code int
			var got string
			if unauthenticated {
				code, got = do(t, s, http.MethodPut, PathEntryLocationCompact, body)
			} else {
				code, got = do(t, s, http.MethodPut, PathEntryLocationCompact, body, auth...)
			}
			trigger := flagKind == 0 || flagKind == 1 || flagKind == 5
			var targets []int
			switch {
			case unauthenticated:
				require.Equal(t, http.StatusUnauthorized, code, ctx)
			case malformed:
				require.Equal(t, http.StatusBadRequest, code, ctx)
				require.Equal(t, jsonString("Failed to deserialize Object from Json string"), got, ctx)
			case flagKind == 4:
				require.Equal(t, http.StatusBadRequest, code, ctx)
				require.Contains(t, got, "entryLocationRocksDBCompact must be", ctx)
			case !trigger:
				require.Equal(t, http.StatusOK, code, ctx)
				require.Equal(t, "Not trigger Entry Location RocksDB compact.", got, ctx)
			case invalidPath:
				require.Equal(t, http.StatusBadRequest, code, ctx)
				require.Equal(t, jsonString("Specified trigger compact entryLocations: "+locations+" is invalid. Bookie entry location RocksDB path: "+pathList+"."), got, ctx)
			case locations == "":
				require.Equal(t, http.StatusOK, code, ctx)
				require.Equal(t, jsonString("Triggered entry Location RocksDB compact on bookie:bookie1:3181"), got, ctx)
				targets = []int{0, 1, 2}
			default:
				require.Equal(t, http.StatusOK, code, ctx)
				require.Equal(t, jsonString("Triggered entry Location RocksDB: "+locations+" compact on bookie:bookie1:3181."), got, ctx)
				targets = idx
			}
			for _, i := range targets {
				if !m.compacting[i] {
					m.compacting[i] = true
					m.counter[i]++
				}
			}

		case 2: // DELETE
			idx := subset()
			target := PathEntryLocationCompact
			if len(idx) > 0 {
				target += "?entryLocations=" + url.QueryEscape(strings.Join(names(idx), ","))
			} else {
				idx = []int{0, 1, 2}
			}
			if rng.IntN(10) == 0 {
				code, _ := do(t, s, http.MethodDelete, target, "")
				require.Equal(t, http.StatusUnauthorized, code, ctx)
				break
			}
			code, got := do(t, s, http.MethodDelete, target, "", auth...)
			require.Equal(t, http.StatusOK, code, ctx)
			want := make(jsonObject, len(idx))
			for k, i := range idx {
				want[k] = jsonField{paths[i], m.compacting[i]}
			}
			require.Equal(t, string(appendJackson(nil, want, 0)), got, ctx)
			for _, i := range idx {
				if m.compacting[i] {
					waitStopped(i)
					m.compacting[i] = false
					m.outcome[i] = outcomeCancelled
				}
			}

		case 3: // a compaction ends
			i := rng.IntN(len(paths))
			if !m.compacting[i] {
				break
			}
			if rng.IntN(4) == 0 {
				fakes[i].release <- errDisk
				m.outcome[i] = outcomeFailed
			} else {
				fakes[i].release <- nil
				m.outcome[i] = outcomeCompleted
			}
			waitStopped(i)
			m.compacting[i] = false

		case 4: // GET
			want := make(jsonObject, len(paths))
			for i, p := range paths {
				want[i] = jsonField{p, m.compacting[i]}
			}
			code, got := do(t, s, http.MethodGet, PathEntryLocationCompact, "")
			require.Equal(t, http.StatusOK, code, ctx)
			require.Equal(t, string(appendJackson(nil, want, 0)), got, ctx)

		case 5: // gc_details
			for i, d := range gcDetails(t, s) {
				require.Equal(t, m.compacting[i], d.EntryLocationCompacting, ctx)
				require.Equal(t, m.counter[i], d.EntryLocationCompactionCounter, ctx)
				require.Equal(t, m.outcome[i], d.LastEntryLocationCompactionOutcome, ctx)
				require.Equal(t, m.counter[i] > 0, d.LastEntryLocationCompactionTime > 0, ctx)
			}
		}
	}
	s.Close()
	for i, f := range fakes {
		require.Equal(t, m.counter[i], f.calls.Load(), "directory %d", i)
	}
}
