package httpapi

import (
	"encoding/base64"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/journal"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// Data API paths (ours: upstream's bookie reads and writes entries over its
// own protocol, not HTTP).
const (
	PathLedgerEntry     = "/api/v1/ledger/entry"
	PathLedgerLastEntry = "/api/v1/ledger/last_entry"
	PathLedger          = "/api/v1/ledger"
	PathCheckpoint      = "/api/v1/bookie/checkpoint"
)

// DefaultMaxEntryBytes is the default limit of an entry's payload in a
// PUT of the data API: upstream's default nettyMaxFrameSizeBytes (5 MiB),
// which bounds what its bookies take in one request.
const DefaultMaxEntryBytes = 5 << 20

// LedgerStorage is what the data API needs from the bookie's storage;
// *bookie.Storage implements it.
type LedgerStorage interface {
	AddEntry(ledgerID, entryID int64, payload []byte) error
	GetEntry(ledgerID, entryID int64) ([]byte, error)
	GetLastEntry(ledgerID int64) (int64, []byte, error)
	DeleteLedger(ledgerID int64) (bool, error)
	Checkpoint() error
	Metrics() []bookie.DirMetrics
}

// streamingStorage is a storage that reads an entry of known size from a
// reader into the memory its write cache keeps (*bookie.Storage): a PUT's
// body is then held once, not read whole and copied.
type streamingStorage interface {
	AddEntryFrom(ledgerID, entryID int64, size int, r io.Reader) error
}

// entrySizeLimiter is a storage that cannot take entries above a size
// (*bookie.Storage: what a write cache holds); the data API's limit is
// the smaller of that and Options.MaxEntryBytes.
type entrySizeLimiter interface {
	MaxEntrySize() int
}

// serveLedgerEntry writes (PUT) and reads (GET) one entry:
// ?ledgerId=L&entryId=E. A PUT's body is the payload; the 200 comes once
// the storage's add returns: with a journaled storage (package
// bookie/journaled, what serve runs) once the journal holds the entry
// durably, with a bare bookie.Storage once it is in the write cache
// (durable at the next checkpoint). A GET answers the payload, or 404;
// entryId -1 reads the ledger's last entry.
func (s *Service) serveLedgerEntry(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPut:
		if !s.authorize(w, r) {
			return
		}
		if ledgerID, entryID, ok := entryQuery(w, r, 0); ok {
			s.putEntry(w, r, ledgerID, entryID)
		}
	case http.MethodGet, http.MethodHead:
		ledgerID, entryID, ok := entryQuery(w, r, bookie.LastEntry)
		if !ok {
			return
		}
		entryID, payload, release, ok := s.readEntry(w, r, ledgerID, entryID, func(n int) int { return n })
		if !ok {
			return
		}
		defer release()
		writePayload(w, ledgerID, entryID, payload)
	default:
		methodNotServed(w, http.StatusNotFound, "GET, HEAD, PUT", msgLedgerEntryMethod)
	}
}

// putEntry adds the body of r as the entry: it refuses a body without a
// length (411) or above the limit (413) before reading it, waits for
// admission (503 if none comes), and streams the body into the storage.
func (s *Service) putEntry(w http.ResponseWriter, r *http.Request, ledgerID, entryID int64) {
	size := r.ContentLength
	switch {
	case size < 0:
		writeText(w, http.StatusLengthRequired, "Length required: a PUT of an entry must carry Content-Length (room for the body is reserved before it is read).")
		return
	case size > s.maxEntryBytes:
		writeText(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("Entry too large: %d bytes, the limit is %d (%s).", size, s.maxEntryBytes, s.maxEntryBytesWhy))
		return
	}
	release, ok := s.admission.admitOp(w, r, opAdd)
	if !ok {
		return
	}
	defer release()
	releaseBytes, ok := s.admission.admitBytes(w, r, opAdd, size)
	if !ok {
		return
	}
	defer releaseBytes()
	body := &bodyReader{r: r.Body}
	var err error
	if st, ok := s.opts.Storage.(streamingStorage); ok {
		err = st.AddEntryFrom(ledgerID, entryID, int(size), body)
	} else {
		payload := make([]byte, size)
		if _, err = io.ReadFull(body, payload); err == nil {
			err = s.opts.Storage.AddEntry(ledgerID, entryID, payload)
		}
	}
	switch {
	case body.err != nil:
		// The client's side failed (it went away, or sent less than its
		// Content-Length): nothing was added.
		writeText(w, http.StatusBadRequest, "Failed to read request body: "+body.err.Error())
		return
	case body.eof && body.n < size:
		writeText(w, http.StatusBadRequest, fmt.Sprintf("Failed to read request body: it ended after %d of its %d bytes (Content-Length).", body.n, size))
		return
	}
	if err != nil {
		s.storageError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, jsonObject{{"ledgerId", ledgerID}, {"entryId", entryID}, {"size", size}})
}

// readEntry reads entry entryID of ledgerID (bookie.LastEntry: the last
// one) under read admission, then admits the answer's bytes, answerBytes
// of the payload's length. It returns the entry's id and payload, and the
// admissions' release, to call once the answer is written; when it fails
// it has answered the client and returns false.
func (s *Service) readEntry(w http.ResponseWriter, r *http.Request, ledgerID, entryID int64, answerBytes func(payloadLen int) int) (int64, []byte, func(), bool) {
	release, ok := s.admission.admitOp(w, r, opRead)
	if !ok {
		return 0, nil, nil, false
	}
	var payload []byte
	var err error
	if entryID == bookie.LastEntry {
		entryID, payload, err = s.opts.Storage.GetLastEntry(ledgerID)
	} else {
		payload, err = s.opts.Storage.GetEntry(ledgerID, entryID)
	}
	if err != nil {
		s.storageError(w, r, err)
		release()
		return 0, nil, nil, false
	}
	releaseBytes, ok := s.admission.admitBytes(w, r, opRead, int64(answerBytes(len(payload))))
	if !ok {
		release()
		return 0, nil, nil, false
	}
	return entryID, payload, func() { releaseBytes(); release() }, true
}

// bodyReader remembers how much its reader gave and how it ended, so
// that a failed PUT can be told apart: the client's body, or the storage.
type bodyReader struct {
	r   io.Reader
	n   int64
	eof bool
	err error // other than io.EOF
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	switch {
	case err == io.EOF:
		b.eof = true
	case err != nil && b.err == nil:
		b.err = err
	}
	return n, err
}

// serveLedgerLastEntry reads a ledger's last entry: ?ledgerId=L. It
// answers {"ledgerId", "entryId", "size", "payload" (base64)}, or 404.
func (s *Service) serveLedgerLastEntry(w http.ResponseWriter, r *http.Request) {
	if !allowGet(w, r, msgLedgerLastEntryMethod) {
		return
	}
	ledgerID, ok := ledgerQuery(w, r)
	if !ok {
		return
	}
	// The answer holds the payload and its base64 text.
	entryID, payload, release, ok := s.readEntry(w, r, ledgerID, bookie.LastEntry, func(n int) int { return n + base64.StdEncoding.EncodedLen(n) })
	if !ok {
		return
	}
	defer release()
	w.Header().Set("X-Entry-Id", strconv.FormatInt(entryID, 10))
	writeJSON(w, http.StatusOK, jsonObject{{"ledgerId", ledgerID}, {"entryId", entryID}, {"size", len(payload)}, {"payload", payload}})
}

// serveLedger deletes a ledger (DELETE ?ledgerId=L): its entries go at
// once, its index space after the next checkpoint's purge and the
// compactions that follow. It answers {"ledgerId", "existed"}.
func (s *Service) serveLedger(w http.ResponseWriter, r *http.Request) {
	if !s.allowMutation(w, r, http.MethodDelete, msgLedgerMethod) {
		return
	}
	ledgerID, ok := ledgerQuery(w, r)
	if !ok {
		return
	}
	existed, err := s.opts.Storage.DeleteLedger(ledgerID)
	if err != nil {
		s.storageError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, jsonObject{{"ledgerId", ledgerID}, {"existed", existed}})
}

// serveCheckpoint runs a checkpoint of every directory (PUT) and answers
// when it is done: every entry written before is durable.
func (s *Service) serveCheckpoint(w http.ResponseWriter, r *http.Request) {
	if !s.allowMutation(w, r, http.MethodPut, msgCheckpointMethod) {
		return
	}
	start := s.opts.Now()
	if err := s.opts.Storage.Checkpoint(); err != nil {
		s.storageError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, jsonObject{{"checkpoint", "done"}, {"durationMs", s.opts.Now().Sub(start).Milliseconds()}})
}

// parseQuery parses the request's query string. A malformed one (a bad
// %-escape, a ';' separator) and a parameter given more than once get 400
// naming it: which of two ids a request means is not for the server to
// guess (upstream's HTTP layer keeps the last silently; a proxy or an
// audit log may have read the first).
func parseQuery(w http.ResponseWriter, r *http.Request) (url.Values, bool) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		writeText(w, http.StatusBadRequest, fmt.Sprintf("Malformed query string %q: %v.", r.URL.RawQuery, err))
		return nil, false
	}
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if n := len(q[name]); n > 1 {
			writeText(w, http.StatusBadRequest, fmt.Sprintf("Query parameter %s is given %d times (%s): give it once.", name, n, strings.Join(quoteAll(q[name]), ", ")))
			return nil, false
		}
	}
	return q, true
}

// ledgerQuery parses the query of a request on a ledger: its ledgerId.
func ledgerQuery(w http.ResponseWriter, r *http.Request) (int64, bool) {
	q, ok := parseQuery(w, r)
	if !ok {
		return 0, false
	}
	return queryID(w, q, "ledgerId", 0)
}

// entryQuery parses the query of a request on an entry: its ledgerId and
// its entryId, at least entryMinimum.
func entryQuery(w http.ResponseWriter, r *http.Request, entryMinimum int64) (ledgerID, entryID int64, ok bool) {
	q, ok := parseQuery(w, r)
	if !ok {
		return 0, 0, false
	}
	if ledgerID, ok = queryID(w, q, "ledgerId", 0); !ok {
		return 0, 0, false
	}
	entryID, ok = queryID(w, q, "entryId", entryMinimum)
	return ledgerID, entryID, ok
}

// quoteAll returns the values, quoted.
func quoteAll(values []string) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = strconv.Quote(v)
	}
	return out
}

// queryID parses an id from the query: an integer from minimum (0, or
// bookie.LastEntry where it means "the last entry") to MaxInt64, in
// decimal, as Java's Long.parseLong reads it (a sign and leading zeros
// are accepted: -0 and +7 are 0 and 7). Anything else is answered 400
// with what is wrong, before the storage sees it.
func queryID(w http.ResponseWriter, q url.Values, name string, minimum int64) (int64, bool) {
	v := q.Get(name)
	if v == "" {
		writeText(w, http.StatusBadRequest, fmt.Sprintf("Missing query parameter %s.", name))
		return 0, false
	}
	id, err := strconv.ParseInt(v, 10, 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		writeText(w, http.StatusBadRequest, fmt.Sprintf("Query parameter %s=%q is out of range: ids are 0 to %d.", name, v, int64(math.MaxInt64)))
		return 0, false
	case err != nil:
		writeText(w, http.StatusBadRequest, fmt.Sprintf("Query parameter %s=%q is not an integer.", name, v))
		return 0, false
	case id < minimum && minimum == bookie.LastEntry:
		writeText(w, http.StatusBadRequest, fmt.Sprintf("Query parameter %s=%q is negative: ids are 0 to %d, and %d reads the last entry.", name, v, int64(math.MaxInt64), bookie.LastEntry))
		return 0, false
	case id < minimum:
		writeText(w, http.StatusBadRequest, fmt.Sprintf("Query parameter %s=%q is negative: ids are 0 to %d.", name, v, int64(math.MaxInt64)))
		return 0, false
	}
	return id, true
}

// writePayload answers an entry's payload.
func writePayload(w http.ResponseWriter, ledgerID, entryID int64, payload []byte) {
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(payload)))
	w.Header().Set("X-Ledger-Id", strconv.FormatInt(ledgerID, 10))
	w.Header().Set("X-Entry-Id", strconv.FormatInt(entryID, 10))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(payload)
}

// storageError answers a storage error: 404 for an absent entry or
// ledger, 400 for a bad argument, 503 for a rejected write (the write
// cache is full: retry later), a write to a read-only storage, a write
// that failed for lack of space, or a closing storage; 500 otherwise.
func (s *Service) storageError(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, bookie.ErrNoEntry), errors.Is(err, bookie.ErrNoLedger):
		writeText(w, http.StatusNotFound, err.Error())
	case errors.Is(err, bookie.ErrInvalidArgument):
		writeText(w, http.StatusBadRequest, err.Error())
	case errors.Is(err, bookie.ErrRejected):
		w.Header().Set("Retry-After", "1")
		writeText(w, http.StatusServiceUnavailable, err.Error())
	case errors.Is(err, bookie.ErrClosed), errors.Is(err, journal.ErrClosed):
		writeText(w, http.StatusServiceUnavailable, err.Error())
	case errors.Is(err, bookie.ErrReadOnly), vfs.IsNoSpace(err):
		readOnlyError(w, err)
	default:
		s.log.Error("data API request failed", "method", r.Method, "path", r.URL.Path, "query", r.URL.RawQuery, "err", err)
		writeText(w, http.StatusInternalServerError, err.Error())
	}
}
