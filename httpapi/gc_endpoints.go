package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/bookie-index/bookie-index/bookie"
)

// Paths of the garbage collector's endpoints, as BookKeeper's HttpRouter
// names them.
const (
	PathGC                = "/api/v1/bookie/gc"
	PathSuspendCompaction = "/api/v1/bookie/gc/suspend_compaction"
	PathResumeCompaction  = "/api/v1/bookie/gc/resume_compaction"
)

// GarbageCollector is what the GC endpoints need from the storage (its
// entry-log garbage collectors); *bookie.Storage implements it.
type GarbageCollector interface {
	ForceGC(forceMajor, forceMinor bool)
	IsInForceGC() bool
	SuspendMajorGC()
	SuspendMinorGC()
	ResumeMajorGC()
	ResumeMinorGC()
	IsMajorGCSuspended() bool
	IsMinorGCSuspended() bool
	// GCStatuses and GCMetrics return each directory's status and
	// statistics, in configuration order.
	GCStatuses() []bookie.GCStatus
	GCMetrics() []bookie.GCMetrics
}

const (
	msgGCMethod      = "Not allowed method. Should be PUT to trigger GC, Or GET to get Force GC state."
	msgSuspendMethod = "Not found method. Should be PUT to suspend major or minor compaction, Or GET to get compaction state."
	msgResumeMethod  = "Not found method. Should be PUT to resume major or minor compaction, Or GET to get compaction state."
)

// registerGC adds the garbage collector's endpoints.
func (s *Service) registerGC() {
	s.mux.HandleFunc(PathGC, s.serveGC)
	s.mux.HandleFunc(PathSuspendCompaction, s.serveSuspendCompaction)
	s.mux.HandleFunc(PathResumeCompaction, s.serveResumeCompaction)
}

// serveGC is upstream's TriggerGCService: PUT forces a GC cycle in every
// directory, in the background (an optional body {"forceMajor": bool,
// "forceMinor": bool}, each defaulting to "not suspended"); GET answers
// whether a forced cycle is pending or running.
func (s *Service) serveGC(w http.ResponseWriter, r *http.Request) {
	gc := s.opts.GC
	switch r.Method {
	case http.MethodPut:
		body, ok := s.authorizedBody(w, r)
		if !ok {
			return
		}
		forceMajor, forceMinor := !gc.IsMajorGCSuspended(), !gc.IsMinorGCSuspended()
		if strings.TrimSpace(string(body)) != "" {
			fields, ok := decodeObject(body)
			if !ok {
				writeText(w, http.StatusBadRequest, "Failed to handle the request, exception: "+msgBadJSON)
				return
			}
			forceMajor = javaParseBoolean(fields["forceMajor"], forceMajor)
			forceMinor = javaParseBoolean(fields["forceMinor"], forceMinor)
		}
		gc.ForceGC(forceMajor, forceMinor)
		s.log.Info("forced garbage collection requested", "forceMajor", forceMajor, "forceMinor", forceMinor, "remote", r.RemoteAddr)
		writeJSONString(w, http.StatusOK, "Triggered GC on BookieServer: "+s.opts.BookieID)
	case http.MethodGet, http.MethodHead:
		writeJSON(w, http.StatusOK, jsonObject{{"is_in_force_gc", strconv.FormatBool(gc.IsInForceGC())}})
	default:
		methodNotServed(w, http.StatusMethodNotAllowed, "GET, HEAD, PUT", msgGCMethod)
	}
}

// javaParseBoolean is upstream's Boolean.parseBoolean(value.toString()):
// true for the JSON boolean true and for the string "true" in any case,
// false for anything else; absent means def.
func javaParseBoolean(raw json.RawMessage, def bool) bool {
	if raw == nil {
		return def
	}
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		return b
	}
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return strings.EqualFold(str, "true")
	}
	return false
}

// serveSuspendCompaction is upstream's SuspendCompactionService: PUT
// {"suspendMajor": bool, "suspendMinor": bool} suspends compactions;
// GET answers {"isMajorGcSuspended" : "...", "isMinorGcSuspended" : "..."}.
func (s *Service) serveSuspendCompaction(w http.ResponseWriter, r *http.Request) {
	gc := s.opts.GC
	switch r.Method {
	case http.MethodPut:
		if s.authorize(w, r) {
			s.switchCompactions(w, r, "suspend", gc.SuspendMajorGC, gc.SuspendMinorGC)
		}
	case http.MethodGet, http.MethodHead:
		writeJSON(w, http.StatusOK, jsonObject{
			{"isMajorGcSuspended", strconv.FormatBool(gc.IsMajorGCSuspended())},
			{"isMinorGcSuspended", strconv.FormatBool(gc.IsMinorGCSuspended())},
		})
	default:
		methodNotServed(w, http.StatusNotFound, "GET, HEAD, PUT", msgSuspendMethod)
	}
}

// serveResumeCompaction is upstream's ResumeCompactionService: PUT
// {"resumeMajor": bool, "resumeMinor": bool}; other methods get 404, as
// upstream.
func (s *Service) serveResumeCompaction(w http.ResponseWriter, r *http.Request) {
	if s.allowMutation(w, r, http.MethodPut, msgResumeMethod) {
		s.switchCompactions(w, r, "resume", s.opts.GC.ResumeMajorGC, s.opts.GC.ResumeMinorGC)
	}
}

// switchCompactions answers an authorized suspend or resume PUT (verb):
// it reads which of the major and minor compactions the body names
// ({"<verb>Major": bool, "<verb>Minor": bool}), switches them with major
// and minor, and answers upstream's sentence ("Suspend majorGC on
// BookieServer: <id>, Suspend minorGC on BookieServer: <id>").
func (s *Service) switchCompactions(w http.ResponseWriter, r *http.Request, verb string, major, minor func()) {
	doMajor, doMinor, ok := s.majorMinorFlags(w, r, verb+"Major", verb+"Minor")
	if !ok {
		return
	}
	title := strings.ToUpper(verb[:1]) + verb[1:]
	out := ""
	if doMajor {
		out = title + " majorGC on BookieServer: " + s.opts.BookieID
		major()
	}
	if doMinor {
		out += ", " + title + " minorGC on BookieServer: " + s.opts.BookieID
		minor()
	}
	s.log.Info("compactions: "+verb, "major", doMajor, "minor", doMinor)
	writeJSONString(w, http.StatusOK, out)
}

// majorMinorFlags reads the body of a suspend or resume request. Upstream
// answers 400 to an empty body and to a body with neither key; where it
// fails with a 500 (bad JSON, a value that is not a boolean) this answers
// 400 naming the problem.
func (s *Service) majorMinorFlags(w http.ResponseWriter, r *http.Request, majorKey, minorKey string) (major, minor, ok bool) {
	body, ok := s.readBody(w, r)
	if !ok {
		return false, false, false
	}
	if strings.TrimSpace(string(body)) == "" {
		writeText(w, http.StatusBadRequest, msgEmptyBody)
		return false, false, false
	}
	fields, ok := decodeObject(body)
	if !ok {
		writeText(w, http.StatusBadRequest, msgBadJSON)
		return false, false, false
	}
	rawMajor, hasMajor := fields[majorKey]
	rawMinor, hasMinor := fields[minorKey]
	if !hasMajor && !hasMinor {
		writeText(w, http.StatusBadRequest, "No "+majorKey+" or "+minorKey+" params found")
		return false, false, false
	}
	for _, f := range []struct {
		key string
		raw json.RawMessage
		dst *bool
	}{{majorKey, rawMajor, &major}, {minorKey, rawMinor, &minor}} {
		if f.raw == nil || string(f.raw) == "null" {
			continue
		}
		if json.Unmarshal(f.raw, f.dst) != nil {
			writeText(w, http.StatusBadRequest, f.key+" must be a JSON boolean, not "+excerpt(f.raw))
			return false, false, false
		}
	}
	return major, minor, true
}

// gcDetailFields are the entry-log garbage collector's fields of
// gc_details for directory i (upstream's GarbageCollectionStatus), or
// none without a GarbageCollector.
func (s *Service) gcDetailFields(statuses []bookie.GCStatus, i int) jsonObject {
	if i >= len(statuses) {
		return nil
	}
	st := statuses[i]
	return jsonObject{
		{"forceCompacting", st.ForceCompacting},
		{"majorCompacting", st.MajorCompacting},
		{"minorCompacting", st.MinorCompacting},
		{"lastMajorCompactionTime", st.LastMajorCompactionTime},
		{"lastMinorCompactionTime", st.LastMinorCompactionTime},
		{"majorCompactionCounter", st.MajorCompactionCounter},
		{"minorCompactionCounter", st.MinorCompactionCounter},
	}
}
