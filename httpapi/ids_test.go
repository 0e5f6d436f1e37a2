package httpapi

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDataAPIIDBoundaries writes, reads, checkpoints, deletes and rewrites
// the ledgers and entries at both ends of the id space over HTTP, and
// checks that negative and out-of-range ids get 400 with a message.
func TestDataAPIIDBoundaries(t *testing.T) {
	s, _ := storageService(t, "")
	const maxID = math.MaxInt64
	ledgers := []int64{0, maxID}
	entries := []int64{0, maxID}
	put := func(l, e int64, body string) {
		t.Helper()
		code, resp := do(t, s, http.MethodPut, entryURL(l, e), body)
		require.Equal(t, http.StatusOK, code, resp)
		require.Contains(t, resp, fmt.Sprintf(`"entryId" : %d`, e))
	}
	get := func(l, e int64) (int, string) {
		t.Helper()
		return do(t, s, http.MethodGet, entryURL(l, e), "")
	}
	lastEntry := func(l int64) (int, int64, string) {
		t.Helper()
		code, body := do(t, s, http.MethodGet, PathLedgerLastEntry+"?ledgerId="+strconv.FormatInt(l, 10), "")
		if code != http.StatusOK {
			return code, 0, body
		}
		var last struct {
			EntryID int64  `json:"entryId"`
			Payload []byte `json:"payload"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &last), body)
		return code, last.EntryID, string(last.Payload)
	}
	checkpoint := func() {
		t.Helper()
		code, body := do(t, s, http.MethodPut, PathCheckpoint, "")
		require.Equal(t, http.StatusOK, code, body)
	}
	for _, l := range ledgers {
		for _, e := range entries {
			put(l, e, fmt.Sprintf("%d/%d", l, e))
		}
	}
	check := func(when string) {
		for _, l := range ledgers {
			for _, e := range entries {
				code, body := get(l, e)
				require.Equal(t, http.StatusOK, code, "%s: %d/%d: %s", when, l, e, body)
				require.Equal(t, fmt.Sprintf("%d/%d", l, e), body)
			}
			code, id, payload := lastEntry(l)
			require.Equal(t, http.StatusOK, code, "%s: last entry of %d: %s", when, l, payload)
			require.Equal(t, int64(maxID), id, "%s: last entry of %d", when, l)
			code, body := get(l, -1)
			require.Equal(t, http.StatusOK, code, "%s: entry -1 of %d: %s", when, l, body)
			require.Equal(t, fmt.Sprintf("%d/%d", l, maxID), body)
		}
	}
	check("before a checkpoint")
	checkpoint()
	check("after a checkpoint")

	for _, l := range ledgers {
		code, body := do(t, s, http.MethodDelete, PathLedger+"?ledgerId="+strconv.FormatInt(l, 10), "")
		require.Equal(t, http.StatusOK, code, body)
		require.Contains(t, body, `"existed" : true`)
	}
	checkpoint() // purges after it
	checkpoint()
	for _, l := range ledgers {
		put(l, 3, "new life")
	}
	checkpoint()
	for _, l := range ledgers {
		for _, e := range entries {
			code, body := get(l, e)
			require.Equal(t, http.StatusNotFound, code, "entry %d of the deleted ledger %d came back: %s", e, l, body)
		}
		code, id, payload := lastEntry(l)
		require.Equal(t, http.StatusOK, code, payload)
		require.Equal(t, int64(3), id)
		require.Equal(t, "new life", payload)
	}

	// Bad ids: 400 with what is wrong, before the storage sees them.
	for _, c := range []struct{ method, target, want string }{
		{http.MethodPut, entryURL(-1, 0), `ledgerId="-1" is negative`},
		{http.MethodPut, entryURL(1, -1), `entryId="-1" is negative`},
		{http.MethodPut, entryURL(1, math.MinInt64), `is negative`},
		{http.MethodGet, entryURL(-5, 0), `ledgerId="-5" is negative`},
		{http.MethodGet, entryURL(1, -2), `entryId="-2" is negative: ids are 0 to 9223372036854775807, and -1 reads the last entry`},
		{http.MethodGet, PathLedgerEntry + "?ledgerId=9223372036854775808&entryId=0", `ledgerId="9223372036854775808" is out of range`},
		{http.MethodGet, PathLedgerEntry + "?ledgerId=1&entryId=99999999999999999999", `is out of range`},
		{http.MethodGet, PathLedgerEntry + "?ledgerId=1&entryId=1e3", `entryId="1e3" is not an integer`},
		{http.MethodGet, PathLedgerLastEntry + "?ledgerId=-1", `ledgerId="-1" is negative`},
		{http.MethodDelete, PathLedger + "?ledgerId=-9223372036854775808", `is negative`},
		{http.MethodDelete, PathLedger + "?ledgerId=-9223372036854775809", `is out of range`},
	} {
		code, body := do(t, s, c.method, c.target, "x")
		require.Equal(t, http.StatusBadRequest, code, "%s %s: %s", c.method, c.target, body)
		require.Contains(t, body, c.want, "%s %s", c.method, c.target)
	}
}

// TestDataAPIIDSpelling: ids are read as Java's Long.parseLong reads them
// (a sign and leading zeros accepted: "-0" is 0, "+7" and "007" are 7);
// a parameter given twice, or a malformed query, gets 400 naming it.
func TestDataAPIIDSpelling(t *testing.T) {
	s, _ := storageService(t, "")
	code, body := do(t, s, http.MethodPut, PathLedgerEntry+"?ledgerId=-0&entryId=%2B7", "zero/seven") // %2B: "+"
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `"ledgerId" : 0`)
	require.Contains(t, body, `"entryId" : 7`)
	code, body = do(t, s, http.MethodGet, PathLedgerEntry+"?ledgerId=000&entryId=007", "")
	require.Equal(t, http.StatusOK, code, body)
	require.Equal(t, "zero/seven", body)

	for _, c := range []struct{ method, target, want string }{
		{http.MethodGet, PathLedgerEntry + "?ledgerId=0&entryId=7&ledgerId=1", `Query parameter ledgerId is given 2 times ("0", "1"): give it once.`},
		{http.MethodPut, PathLedgerEntry + "?ledgerId=0&entryId=7&entryId=7", `Query parameter entryId is given 2 times`},
		{http.MethodDelete, PathLedger + "?ledgerId=0&ledgerId=0", `Query parameter ledgerId is given 2 times`},
		{http.MethodGet, PathLedgerLastEntry + "?ledgerId=0&ledgerId=", `Query parameter ledgerId is given 2 times`},
		{http.MethodGet, PathLedgerEntry + "?ledgerId=0&entryId=%zz", `Malformed query string`},
		{http.MethodGet, PathLedgerEntry + "?ledgerId=0;entryId=7", `Malformed query string`},
	} {
		code, body := do(t, s, c.method, c.target, "x")
		require.Equal(t, http.StatusBadRequest, code, "%s %s: %s", c.method, c.target, body)
		require.Contains(t, body, c.want, "%s %s", c.method, c.target)
	}
}
