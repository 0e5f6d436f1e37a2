package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/cockroachdb/errors"
)

// writeText answers a raw text body, as upstream answers its plain
// messages.
func writeText(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// writeJSON answers v printed as Jackson's default pretty printer prints
// it (see jackson.go).
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(appendJackson(nil, v, 0))
}

// writeJSONString answers a message as a JSON string, as upstream answers
// the messages it passes through JsonUtil.toJson.
func writeJSONString(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, msg)
}

// authorize checks the bearer token of a request that changes state and
// answers 401 when it is missing or wrong. It reports whether the request
// may go on.
func (s *Service) authorize(w http.ResponseWriter, r *http.Request) bool {
	if s.opts.AuthToken == "" {
		return true
	}
	scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if strings.EqualFold(scheme, "Bearer") && tokensEqual(strings.TrimSpace(token), s.opts.AuthToken) {
		return true
	}
	s.log.Warn("rejected an unauthenticated admin request", "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr)
	w.Header().Set("WWW-Authenticate", `Bearer realm="bookie-index"`)
	writeText(w, http.StatusUnauthorized, "Unauthorized: this request needs an \"Authorization: Bearer <token>\" header with the token of httpServerAuthTokenFile.")
	return false
}

// authorizedBody is authorize, then readBody: the body of a mutation.
func (s *Service) authorizedBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if !s.authorize(w, r) {
		return nil, false
	}
	return s.readBody(w, r)
}

// authorizedQuery is authorize, then parseQuery: the query of a mutation.
func (s *Service) authorizedQuery(w http.ResponseWriter, r *http.Request) (url.Values, bool) {
	if !s.authorize(w, r) {
		return nil, false
	}
	return parseQuery(w, r)
}

// tokensEqual compares two tokens in time that depends on neither their
// contents nor their lengths: it compares their SHA-256 digests.
func tokensEqual(a, b string) bool {
	da, db := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(da[:], db[:]) == 1
}

// readBody reads a request body of at most s.opts.MaxBodyBytes. When it
// fails it answers the client (413 for a body too large, 400 for one that
// cannot be read) and returns false.
func (s *Service) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	return readBodyLimit(w, r, s.opts.MaxBodyBytes)
}

// readBodyLimit reads a request body of at most limit bytes, as readBody.
func readBodyLimit(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, bool) {
	if r.ContentLength > limit {
		writeText(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("Request body too large: %d bytes, the limit is %d.", r.ContentLength, limit))
		return nil, false
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeText(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("Request body too large: the limit is %d bytes.", limit))
			return nil, false
		}
		writeText(w, http.StatusBadRequest, "Failed to read request body: "+err.Error())
		return nil, false
	}
	return data, true
}
