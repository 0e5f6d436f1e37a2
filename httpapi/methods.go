package httpapi

import "net/http"

// Answers to a method an endpoint does not serve. Upstream's services each
// answer their own: most 404 NOT_FOUND with a plain-text body naming the
// methods they take, TriggerLocationCompactService and TriggerGCService 405,
// MetricsService 403. The endpoints upstream has answer its status and body
// verbatim (clients and scripts match on them); ours follow its usual
// shape, 404 and "Not found method. Should be ...". Every such answer also
// carries an Allow header listing the methods the endpoint serves.
const (
	msgGCDetailsMethod     = "Only support GET method to retrieve GC details. If you want to trigger gc, send a POST to gc endpoint."
	msgStateMethod         = "Only support GET method to retrieve bookie state."
	msgIsReadyMethod       = "Only support GET method check if bookie is ready."
	msgInfoMethod          = "Only GET is supported."
	msgStateReadOnlyMethod = "Unsupported method. Should be GET or PUT method"
	// Upstream's ConfigurationService also takes a PUT that changes keys at
	// runtime; ours does not (the effective configuration is fixed at
	// start), so the PUT gets the 404 too, with a body that says why
	// rather than upstream's "Request body not found".
	msgServerConfigMethod = "Only support GET method to retrieve the server configuration: it cannot be changed at runtime."

	msgLedgerEntryMethod     = "Not found method. Should be PUT to write an entry, or GET to read it."
	msgLedgerLastEntryMethod = "Not found method. Should be GET method to read a ledger's last entry."
	msgLedgerMethod          = "Not found method. Should be DELETE method to delete a ledger."
	msgCheckpointMethod      = "Not found method. Should be PUT to run a checkpoint."
	msgIndexCheckpointMethod = "Not found method. Should be PUT or POST to checkpoint the indexes."
)

// methodNotServed answers a method the endpoint does not serve: status and
// body as above, allow the methods it serves.
func methodNotServed(w http.ResponseWriter, status int, allow, body string) {
	w.Header().Set("Allow", allow)
	writeText(w, status, body)
}

// allowMutation reports whether r is a request with the one method a
// mutation takes, from an authorized client: else it answers 404 with
// msg (upstream's answer to another method) or 401, and returns false.
func (s *Service) allowMutation(w http.ResponseWriter, r *http.Request, method, msg string) bool {
	if r.Method != method {
		methodNotServed(w, http.StatusNotFound, method, msg)
		return false
	}
	return s.authorize(w, r)
}

// allowGet reports whether r is a GET (or a HEAD, served as a GET); else
// it answers 404 with msg, as upstream's GET-only services answer, and
// returns false.
func allowGet(w http.ResponseWriter, r *http.Request, msg string) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	methodNotServed(w, http.StatusNotFound, "GET, HEAD", msg)
	return false
}
