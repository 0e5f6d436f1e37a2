package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// The request fields of the compaction endpoint, as upstream names them.
const (
	fieldCompact   = "entryLocationRocksDBCompact"
	fieldLocations = "entryLocations"
)

// Upstream's messages, verbatim (clients match on them).
const (
	msgEmptyBody      = "Empty request body"
	msgBadJSON        = "Failed to deserialize Object from Json string"
	msgNotTriggered   = "Not trigger Entry Location RocksDB compact."
	msgMethodNotFound = "Not found method. Should be PUT to trigger entry location compact, Or GET to get entry location compact state."
)

// serveEntryLocationCompact is upstream's TriggerLocationCompactService
// plus DELETE.
func (s *Service) serveEntryLocationCompact(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		s.compactionState(w)
	case http.MethodPut:
		if s.authorize(w, r) {
			s.triggerCompaction(w, r)
		}
	case http.MethodDelete:
		if s.authorize(w, r) {
			s.cancelCompactions(w, r)
		}
	default:
		methodNotServed(w, http.StatusMethodNotAllowed, "GET, HEAD, PUT, DELETE", msgMethodNotFound)
	}
}

// compactionState answers every index path → whether it is compacting.
func (s *Service) compactionState(w http.ResponseWriter) {
	s.mu.Lock()
	state := make(jsonObject, len(s.dirs))
	for i, d := range s.dirs {
		state[i] = jsonField{d.path, d.compactingLocked()}
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, state)
}

// triggerCompaction answers a PUT exactly as upstream where upstream
// answers, and 400 with a message where upstream fails with a 500.
func (s *Service) triggerCompaction(w http.ResponseWriter, r *http.Request) {
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	if len(bytes.TrimSpace(body)) == 0 {
		writeText(w, http.StatusBadRequest, msgEmptyBody)
		return
	}
	fields, ok := decodeObject(body)
	if !ok {
		writeJSONString(w, http.StatusBadRequest, msgBadJSON)
		return
	}
	compact, err := parseFlag(fields[fieldCompact])
	if err != nil {
		writeJSONString(w, http.StatusBadRequest, err.Error())
		return
	}
	locations, err := parseLocations(fields[fieldLocations])
	if err != nil {
		writeJSONString(w, http.StatusBadRequest, err.Error())
		return
	}
	if !compact {
		writeText(w, http.StatusOK, msgNotTriggered)
		return
	}
	if strings.TrimSpace(locations) == "" {
		for _, d := range s.dirs {
			s.startCompaction(d, TriggerHTTP)
		}
		writeJSONString(w, http.StatusOK, "Triggered entry Location RocksDB compact on bookie:"+s.opts.BookieID)
		return
	}
	dirs, ok := s.resolve(locations)
	if !ok {
		writeJSONString(w, http.StatusBadRequest, fmt.Sprintf(
			"Specified trigger compact entryLocations: %s is invalid. Bookie entry location RocksDB path: %s.",
			locations, javaList(s.paths)))
		return
	}
	for _, d := range dirs {
		s.startCompaction(d, TriggerHTTP)
	}
	writeJSONString(w, http.StatusOK, fmt.Sprintf("Triggered entry Location RocksDB: %s compact on bookie:%s.", locations, s.opts.BookieID))
}

// cancelCompactions answers a DELETE: the optional entryLocations query
// parameter (comma-separated, and may repeat) names the directories, all
// by default; the answer maps each one's path to whether a running
// compaction was asked to stop.
func (s *Service) cancelCompactions(w http.ResponseWriter, r *http.Request) {
	query, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		writeJSONString(w, http.StatusBadRequest, "Malformed query string: "+err.Error())
		return
	}
	locations := strings.Join(query[fieldLocations], ",")
	dirs := s.dirs
	if strings.TrimSpace(locations) != "" {
		var ok bool
		if dirs, ok = s.resolve(locations); !ok {
			writeJSONString(w, http.StatusBadRequest, fmt.Sprintf(
				"Specified cancel compact entryLocations: %s is invalid. Bookie entry location RocksDB path: %s.",
				locations, javaList(s.paths)))
			return
		}
	}
	answer := make(jsonObject, len(dirs))
	for i, d := range dirs {
		answer[i] = jsonField{d.path, s.cancelCompaction(d)}
	}
	writeJSON(w, http.StatusOK, answer)
}

// resolve maps a comma-separated list of index paths to directories, each
// once, in the list's order. Items are trimmed and empty ones skipped
// (upstream splits without trimming, and Java's split drops trailing empty
// items). It fails if an item names no directory or none is named.
func (s *Service) resolve(locations string) ([]*directory, bool) {
	var dirs []*directory
	seen := make(map[*directory]bool)
	for _, item := range strings.Split(locations, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		d := s.lookup(item)
		if d == nil {
			return nil, false
		}
		if !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	return dirs, len(dirs) > 0
}

// decodeObject decodes a JSON object into its raw fields. It fails on
// anything else: invalid JSON, another type, null, trailing data.
func decodeObject(body []byte) (map[string]json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	var fields map[string]json.RawMessage
	if err := dec.Decode(&fields); err != nil || fields == nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return fields, true
}

// parseFlag decodes entryLocationRocksDBCompact: a JSON boolean, or (our
// improvement; upstream answers 500) the string "true" or "false" in any
// case. Absent and null mean false.
func parseFlag(raw json.RawMessage) (bool, error) {
	if raw == nil || string(raw) == "null" {
		return false, nil
	}
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		return b, nil
	}
	var str string
	if json.Unmarshal(raw, &str) == nil {
		switch strings.ToLower(strings.TrimSpace(str)) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
	}
	return false, fmt.Errorf("%s must be true or false (a JSON boolean, or the string \"true\" or \"false\"), not %s",
		fieldCompact, excerpt(raw))
}

// parseLocations decodes entryLocations: a string of comma-separated
// paths, or (our improvement; upstream answers 500) an array of path
// strings, joined with commas. Absent and null mean all directories ("").
func parseLocations(raw json.RawMessage) (string, error) {
	if raw == nil || string(raw) == "null" {
		return "", nil
	}
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return str, nil
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return strings.Join(list, ","), nil
	}
	return "", fmt.Errorf("%s must be a string of comma-separated entry location paths (or an array of paths), not %s",
		fieldLocations, excerpt(raw))
}

// excerpt quotes a client's value in a message, shortened to keep the
// answer small.
func excerpt(raw json.RawMessage) string {
	const max = 64
	s := string(raw)
	if len(s) > max {
		s = strings.ToValidUTF8(s[:max], "") + "..."
	}
	return s
}

// javaList prints a list as Java's List.toString does: [a, b].
func javaList(items []string) string {
	return "[" + strings.Join(items, ", ") + "]"
}
