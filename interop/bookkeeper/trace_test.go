package bookkeeper

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A differential trace: a header line, then one JSON object per
// operation with its arguments and BookKeeper's answer ("ret") or the
// class of the exception it threw ("exc").
type traceOp struct {
	Op   string          `json:"op"`
	L    int64           `json:"l"`
	E    int64           `json:"e"`
	Loc  int64           `json:"loc"`
	Adds [][3]int64      `json:"adds"`
	Mid  [3]int64        `json:"mid"`
	Locs [][3]int64      `json:"locs"`
	Ret  json.RawMessage `json:"ret"`
	Exc  string          `json:"exc"`
	// The storage trace's.
	Size   int    `json:"size"`
	Key    string `json:"key"`
	LAC    string `json:"lac"`
	First  int64  `json:"first"`
	Last   int64  `json:"last"`
	Seed   int64  `json:"seed"`
	Sha256 string `json:"sha256"`
	Bytes  string `json:"bytes"`
}

type traceHeader struct {
	Trace      string `json:"trace"`
	BookKeeper string `json:"bookkeeper"`
	Seed       int64  `json:"seed"`
	Ops        int    `json:"ops"`
}

func readTrace(t *testing.T, path string) (traceHeader, []traceOp) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	require.True(t, sc.Scan(), "%s: no header", path)
	var h traceHeader
	require.NoError(t, json.Unmarshal(sc.Bytes(), &h))
	var ops []traceOp
	for sc.Scan() {
		var op traceOp
		require.NoError(t, json.Unmarshal(sc.Bytes(), &op), "%s line %d", path, len(ops)+2)
		ops = append(ops, op)
	}
	require.NoError(t, sc.Err())
	require.Len(t, ops, h.Ops, "%s: the header counts %d operations", path, h.Ops)
	return h, ops
}

// answer is one answer of either side: a value, or an error of a kind
// both sides name alike.
type answer struct {
	ret int64
	err string // "": none; "NoEntry", "InvalidArgument", or what else was thrown
}

func (a answer) String() string {
	if a.err != "" {
		return a.err
	}
	return fmt.Sprint(a.ret)
}

// upstreamKind names BookKeeper's exceptions as the kinds both sides share.
func upstreamKind(exc string) string {
	switch exc {
	case "":
		return ""
	case "org.apache.bookkeeper.bookie.Bookie$NoEntryException":
		return "NoEntry"
	case "org.apache.bookkeeper.bookie.Bookie$NoLedgerException":
		return "NoLedger"
	case "java.lang.IllegalArgumentException":
		return "InvalidArgument"
	case "org.apache.bookkeeper.bookie.BookieException$BookieIllegalOpException", "java.io.IOException:BookieIllegalOpException":
		return "WrongMasterKey"
	}
	return exc
}

// differences counts the answers that differ, by documented reason.
type differences map[string]int

func (d differences) log(t *testing.T) {
	var reasons []string
	for r, n := range d {
		reasons = append(reasons, fmt.Sprintf("%d × %s", n, r))
	}
	sort.Strings(reasons)
	if len(reasons) == 0 {
		t.Logf("no answer differs")
		return
	}
	t.Logf("answers that differ, each for a reason listed in docs/upstream.md:\n  %s", strings.Join(reasons, "\n  "))
}

// errKind reports an error of ours as a kind, failing on an unexpected one.
func errKind(t *testing.T, err error, kinds map[string]error, what string) string {
	t.Helper()
	if err == nil {
		return ""
	}
	for name, target := range kinds {
		if errors.Is(err, target) {
			return name
		}
	}
	t.Fatalf("%s: unexpected error %v", what, err)
	return ""
}

var traceFile = flag.String("replay-trace", "", "a trace file for TestReplayTraceFile to replay (a program's --out)")

// TestReplayTraceFile replays the trace named by -replay-trace, of either class:
// to study a failing fresh seed without running BookKeeper again.
func TestReplayTraceFile(t *testing.T) {
	if *traceFile == "" {
		t.Skip("replays a trace file only with -replay-trace PATH")
	}
	h, _ := readTrace(t, *traceFile)
	switch h.Trace {
	case "EntryLocationIndex":
		replayIndexTrace(t, *traceFile)
	case "DbLedgerStorage":
		replayStorageTrace(t, *traceFile)
	default:
		t.Fatalf("%s: unknown trace %q", *traceFile, h.Trace)
	}
}
