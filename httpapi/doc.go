// Package httpapi is bookie-index's admin HTTP API: BookKeeper's entry
// location compaction endpoint and the operator endpoints around it, with
// the request and response shapes of BookKeeper's admin server so that
// operators' scripts and dashboards keep working.
//
// A Service is an http.Handler over one entry location index per ledger
// directory:
//
//	/api/v1/bookie/entry_location_compact   PUT    trigger compactions (upstream's shapes)
//	                                        GET    {"<path>" : compacting?} (upstream's shape)
//	                                        DELETE cancel running compactions (ours; upstream PR #4837)
//	/api/v1/bookie/gc_details               GET    per directory: last compaction time, counter, compacting
//	/api/v1/bookie/state                    GET    running, readOnly and the directories
//	/api/v1/config/server_config            GET    the effective bk_server.conf keys (if Options.Settings)
//	/api/v1/bookie/is_ready                 GET    OK, or 503 with why when the storage cannot serve
//	/heartbeat                              any    OK, or 503 with why when the storage cannot serve
//	/metrics                                GET    Prometheus text (BookKeeper's names; docs/upstream.md)
//
// With Options.Storage, the bookie's storage, a data API (ours: upstream's
// bookie reads and writes entries over its own protocol) and its
// statistics:
//
//	/api/v1/ledger/entry?ledgerId=&entryId= PUT    write an entry (body = payload); durable after the next checkpoint
//	                                        GET    the payload (application/octet-stream), 404 if absent; entryId=-1: the last entry
//	/api/v1/ledger/last_entry?ledgerId=     GET    {"ledgerId", "entryId", "size", "payload" (base64)}, 404 if none
//	/api/v1/ledger?ledgerId=                DELETE delete a ledger: {"ledgerId", "existed"}
//	/api/v1/bookie/checkpoint               PUT    checkpoint every directory; answers once every entry written before is durable
//	/api/v1/bookie/index_checkpoint?dir=    PUT, POST copy every directory's indexes into new directories under dir (tables hard-linked)
//	/api/v1/bookie/state/readonly           GET    {"readOnly", "reason"}
//	                                        PUT    {"readOnly": true|false}: force read-only, or make writable (upstream's body)
//
// With Options.GC, the storage's entry-log garbage collectors (upstream's
// TriggerGCService, SuspendCompactionService, ResumeCompactionService):
//
//	/api/v1/bookie/gc                       PUT    force a GC cycle in every directory, in the background;
//	                                               optional body {"forceMajor": bool, "forceMinor": bool}
//	                                        GET    {"is_in_force_gc" : "true"|"false"}
//	/api/v1/bookie/gc/suspend_compaction    PUT    {"suspendMajor": bool, "suspendMinor": bool}
//	                                        GET    {"isMajorGcSuspended" : "...", "isMinorGcSuspended" : "..."}
//	/api/v1/bookie/gc/resume_compaction     PUT    {"resumeMajor": bool, "resumeMinor": bool}
//
// and gc_details gains upstream's GarbageCollectionStatus fields
// (forceCompacting, majorCompacting, minorCompacting,
// lastMajorCompactionTime, lastMinorCompactionTime, majorCompactionCounter,
// minorCompactionCounter). Their PUTs need the token like the others.
//
// A write rejected because the write cache stayed full, or refused by a
// read-only storage (a full or failing disk, or forced), gets 503 with
// Retry-After and the reason; a bad id 400 with what is wrong (ids are 0 to 2^63-1: a
// negative, out-of-range or non-integer one, read as Java's Long.parseLong
// reads it); a query parameter given twice, or a malformed query, 400; a
// PUT without Content-Length 411, and one above Options.MaxEntryBytes
// (upstream's nettyMaxFrameSizeBytes) 413 before its body is read.
//
// Admission control (admission.go) bounds what the data API holds: the
// bytes of entry bodies in flight (Options.MaxEntryBytesInFlight; a PUT
// reserves its Content-Length before reading the body, which streams into
// the write cache, and a read its payload while it answers it), and the
// adds and reads in progress (Options.MaxAddsInProgress and
// MaxReadsInProgress: upstream's maxAddsInProgressLimit and
// maxReadsInProgressLimit). A request that does not fit waits
// Options.AdmissionWait in line, then gets 503 with Retry-After.
//
// index_checkpoint writes only into a directory that follows the rules of
// backup_path.go: a clean absolute path, symbolic links resolved, outside
// the kernel's file systems and every data directory, under
// Options.BackupRoot if set; 400 naming the rule otherwise, 409 when a
// checkpoint is there already.
// The storage's statistics are exported with upstream's DbLedgerStorage
// names (bookie_SERVER_STATUS: 1 writable, 0 read-only; bookie_add_entry, bookie_read_entry, bookie_flush,
// bookie_flush_entrylog, bookie_flush_locations_index, bookie_write_cache_hits,
// ...), labelled by directory.
//
// # Compatibility and improvements
//
// The PUT and GET of entry_location_compact answer exactly as upstream's
// TriggerLocationCompactService: the same status codes and bodies, raw text
// for some and a JSON string for others, and GET's map printed as Jackson's
// default pretty printer prints it ("path" : true). Where upstream fails
// with a 500 on a client's mistake, the Service answers 400 with a message:
// the flag may also be the string "true" or "false" (as upstream's own
// documentation sends it), entryLocations may also be a JSON array of
// paths, and a value of the wrong type is named in the answer. Paths in
// entryLocations are trimmed one by one and compared after
// filepath.Clean.
//
// A method an endpoint does not serve gets upstream's answer for it (see
// methods.go): mostly 404 with upstream's message, 405 for
// entry_location_compact and gc, 403 for /metrics; /heartbeat answers every
// method. Request bodies are limited (Options.MaxBodyBytes,
// 64 KiB by default, 413 beyond); a client error is never a 500.
//
// # Compactions
//
// A compaction runs in the background: PUT answers at once. One runs per
// directory at a time; a trigger for a directory that is compacting is
// skipped, as upstream skips it, and still answered "Triggered". DELETE
// cancels the context given to the index's Compact. The Service records
// each directory's last compaction (start time, counter, duration and
// outcome) for gc_details and the metrics, whichever started it: an HTTP
// request or RunPeriodicCompaction, which compacts every directory once per
// interval plus a random delay in [0, interval), as BookKeeper's garbage
// collector thread does. A compaction triggered over HTTP postpones the
// next periodic one of its directory.
//
// # Authentication
//
// When Options.AuthToken is set, the requests that change state (PUT and
// DELETE) must carry "Authorization: Bearer <token>"; without it, or with a
// wrong one, they get 401. The token is compared in constant time. Reads
// need no token, as upstream's admin server needs none.
//
// # Concurrency
//
// A Service is safe for concurrent use. Close cancels the running
// compactions and waits for them; it does not close the indexes, which
// belong to the caller.
package httpapi
