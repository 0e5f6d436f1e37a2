package httpapi

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
	"github.com/prometheus/client_golang/prometheus"
)

// Endpoint paths, as BookKeeper's HttpRouter names them.
const (
	PathEntryLocationCompact = "/api/v1/bookie/entry_location_compact"
	PathGCDetails            = "/api/v1/bookie/gc_details"
	PathState                = "/api/v1/bookie/state"
	PathServerConfig         = "/api/v1/config/server_config"
	PathHeartbeat            = "/heartbeat"
	PathIsReady              = "/api/v1/bookie/is_ready"
	PathMetrics              = "/metrics"
)

// DefaultMaxBodyBytes is the default limit of a request body.
const DefaultMaxBodyBytes = 64 << 10

// Index is what the Service needs from an entry location index;
// *entrylocation.Index implements it.
type Index interface {
	// Path is the index's directory, <indexDir>/current/locations; the
	// compaction endpoint names directories by it.
	Path() string
	// Compact compacts the whole index and returns when done, or early
	// with an error when ctx is cancelled.
	Compact(ctx context.Context) error
	// IsCompacting reports whether a Compact is running.
	IsCompacting() bool
	// Metrics returns a snapshot of the index's statistics.
	Metrics() entrylocation.Metrics
}

// Directory is one ledger directory and its index.
type Directory struct {
	// LedgerDir and IndexDir are the values of the ledgerDir and indexDir
	// labels of the directory's metrics. BookKeeper labels them with the
	// directories' "current" subdirectories (<ledgerDirectory>/current).
	LedgerDir, IndexDir string
	// Index is the directory's entry location index.
	Index Index
	// IndexFiles, if set, says whether a compaction may start
	// (*bookie.DirStorage: not in a read-only storage whose index disk
	// has less than minUsableSizeForIndexFileCreation usable).
	IndexFiles IndexFileSpace
	// Space, if set, says whether the directory is full
	// (*bookie.DirStorage): the state endpoint's directories and the
	// bookie_ledger_writable_dirs gauge report it. A full directory does
	// not make the storage read-only with readOnlyModeOnAnyDiskFullEnabled
	// false, so only these show it.
	Space DirectorySpace
}

// DirectorySpace reports whether a directory is full, and why.
type DirectorySpace interface {
	Full() (bool, string)
}

// IndexFileSpace is what a compaction asks before it starts: whether the
// directory may create index files now (nil) or why not.
type IndexFileSpace interface {
	CanCreateIndexFiles() error
}

// Options configure a Service.
type Options struct {
	// Directories are the ledger directories, in configuration order. At
	// least one; their index paths must differ.
	Directories []Directory
	// BookieID names the bookie in the answers of the compaction endpoint
	// ("Triggered ... on bookie:<BookieID>"). Default "localhost".
	BookieID string
	// AuthToken, if not empty, is the bearer token that PUT and DELETE
	// requests must carry.
	AuthToken string
	// EnableStatistics says whether the indexes time their lookups; the
	// latency summaries carry quantiles and sums only when it is set.
	EnableStatistics bool
	// Settings are the effective configuration keys served by
	// /api/v1/config/server_config; nil leaves that endpoint out.
	Settings map[string]string
	// Registry receives the Service's metrics and is what /metrics
	// serves. Nil: a new registry.
	Registry *prometheus.Registry
	// Logger receives the Service's log lines. Nil: discarded.
	Logger *slog.Logger
	// MaxBodyBytes limits request bodies; larger ones get 413. Zero means
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// RandomCompactionDelay draws the random delay added to each period
	// of RunPeriodicCompaction, in [0, interval). Nil: uniform.
	RandomCompactionDelay func(interval time.Duration) time.Duration
	// Now is the clock. Nil: time.Now.
	Now func() time.Time
	// Storage, if set, is the bookie's storage: the data API (entries
	// and ledgers) and the checkpoint endpoint act on it, and /metrics
	// exports its statistics. The Directories are then normally its
	// directories' indexes.
	Storage LedgerStorage
	// Journals, if set, are the bookie's journals: the last_log_mark
	// endpoint answers their marks and /metrics exports their statistics.
	Journals Journals
	// GC, if set, is the storage's entry-log garbage collectors: the gc,
	// suspend_compaction and resume_compaction endpoints act on them and
	// gc_details reports them (the Directories in the same order).
	GC GarbageCollector
	// MaxEntryBytes limits the payload of a PUT of the data API
	// (upstream's nettyMaxFrameSizeBytes); larger ones get 413, before
	// their body is read when Content-Length says so. Zero means
	// DefaultMaxEntryBytes. A storage that holds less (MaxEntrySize)
	// lowers it.
	MaxEntryBytes int64
	// FS holds the Directories: /api/v1/bookie/info reports its
	// DiskUsage. Nil: vfs.Default (the operating system).
	FS vfs.FS
	// MaxEntryBytesInFlight bounds the bytes of entry bodies the data
	// API holds at once: PUT bodies (reserved, by Content-Length, before
	// they are read) and answered payloads (see admission.go). A request
	// beyond it waits up to AdmissionWait, then gets 503 with
	// Retry-After. Zero means DefaultMaxEntryBytesInFlight; negative: no
	// limit.
	MaxEntryBytesInFlight int64
	// MaxAddsInProgress and MaxReadsInProgress bound the entry PUTs and
	// the entry reads in progress (upstream's maxAddsInProgressLimit and
	// maxReadsInProgressLimit); 0 or negative: no limit, as upstream. A
	// request beyond one waits up to AdmissionWait, then gets 503.
	MaxAddsInProgress, MaxReadsInProgress int
	// AdmissionWait is how long a data API request waits for room under
	// those limits. Zero means DefaultAdmissionWait; negative: no wait.
	AdmissionWait time.Duration
	// BackupRoot, if set, is the directory under which index_checkpoint
	// may write (indexCheckpointRootDirectory); empty: anywhere the rules
	// of backup_path.go allow.
	BackupRoot string
	// DataDirs are the directories no index checkpoint may go into: the
	// ledger, index and journal directories. Nil: those of Directories
	// whose labels are <dir>/current (the storage's), as <dir>.
	DataDirs []DataDir
	// BackupFS is the file system the index checkpoint's target is
	// checked on: the storage's. Nil: OSBackupFS when FS is the operating
	// system's, else FS without symbolic links (VFSBackupFS). The
	// kernel's file systems (/proc, /dev, /sys) are refused only on
	// OSBackupFS.
	BackupFS BackupFS
}

// Service is the admin HTTP API; see the package documentation.
type Service struct {
	opts     Options
	log      *slog.Logger
	mux      *http.ServeMux
	registry *prometheus.Registry
	metrics  http.Handler

	dirs   []*directory
	byPath map[string]*directory
	// paths are the index paths in directory order, as upstream lists
	// them in its error messages.
	paths []string

	// ctx is the parent of every compaction's context; Close cancels it.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// admission bounds the data API's requests and bytes in flight;
	// maxEntryBytes is the largest entry a PUT may carry, and
	// maxEntryBytesWhy what sets it (the 413 says which key to raise).
	admission        *admission
	maxEntryBytes    int64
	maxEntryBytesWhy string
	// backupRules check index checkpoint targets; checkpointMu runs one
	// index checkpoint at a time.
	backupRules  backupRules
	checkpointMu sync.Mutex

	// mu guards closed and the compaction state of every directory.
	mu     sync.Mutex
	closed bool
}

// New returns a Service over opts.Directories and registers its metrics
// on opts.Registry.
func New(opts Options) (*Service, error) {
	if len(opts.Directories) == 0 {
		return nil, errors.New("httpapi: no directories")
	}
	if opts.BookieID == "" {
		opts.BookieID = "localhost"
	}
	if opts.MaxBodyBytes == 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.MaxBodyBytes < 0 {
		return nil, errors.Newf("httpapi: MaxBodyBytes %d is negative", opts.MaxBodyBytes)
	}
	if opts.MaxEntryBytes == 0 {
		opts.MaxEntryBytes = DefaultMaxEntryBytes
	}
	if opts.MaxEntryBytes < 0 {
		return nil, errors.Newf("httpapi: MaxEntryBytes %d is negative", opts.MaxEntryBytes)
	}
	if opts.MaxEntryBytesInFlight == 0 {
		opts.MaxEntryBytesInFlight = DefaultMaxEntryBytesInFlight
	}
	if opts.AdmissionWait == 0 {
		opts.AdmissionWait = DefaultAdmissionWait
	}
	if opts.Registry == nil {
		opts.Registry = prometheus.NewRegistry()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.RandomCompactionDelay == nil {
		opts.RandomCompactionDelay = uniformDelay
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.FS == nil {
		opts.FS = vfs.Default
	}
	s := &Service{
		opts:          opts,
		log:           opts.Logger,
		registry:      opts.Registry,
		byPath:        make(map[string]*directory, len(opts.Directories)),
		admission:     newAdmission(&opts),
		maxEntryBytes: opts.MaxEntryBytes,
	}
	s.backupRules = backupRules{fs: opts.BackupFS, root: opts.BackupRoot, data: opts.DataDirs}
	if s.backupRules.fs == nil {
		s.backupRules.fs = VFSBackupFS{FS: opts.FS}
		if opts.FS == vfs.Default {
			s.backupRules.fs = OSBackupFS{}
		}
	}
	if _, ok := s.backupRules.fs.(OSBackupFS); ok {
		s.backupRules.real = true
	}
	if s.backupRules.data == nil {
		s.backupRules.data = defaultDataDirs(opts.Directories)
	}
	if opts.BackupRoot != "" && (!filepath.IsAbs(opts.BackupRoot) || filepath.Clean(opts.BackupRoot) != opts.BackupRoot) {
		return nil, errors.Newf("httpapi: BackupRoot %q is not a clean absolute path", opts.BackupRoot)
	}
	s.maxEntryBytesWhy = "nettyMaxFrameSizeBytes: raise it to take larger entries"
	if l, ok := opts.Storage.(entrySizeLimiter); ok && int64(l.MaxEntrySize()) < s.maxEntryBytes {
		s.maxEntryBytes = int64(l.MaxEntrySize())
		s.maxEntryBytesWhy = fmt.Sprintf("what half of a directory's write cache holds, below nettyMaxFrameSizeBytes=%d: "+
			"raise dbStorage_writeCacheMaxSizeMb to take larger entries", opts.MaxEntryBytes)
	}
	for i, d := range opts.Directories {
		if d.Index == nil {
			return nil, errors.Newf("httpapi: directory %d (%s) has no index", i, d.LedgerDir)
		}
		path := d.Index.Path()
		if path == "" {
			return nil, errors.Newf("httpapi: directory %d (%s): the index has an empty path", i, d.LedgerDir)
		}
		if _, dup := s.byPath[path]; dup {
			return nil, errors.Newf("httpapi: index path %q is listed twice", path)
		}
		for _, o := range s.dirs {
			if o.LedgerDir == d.LedgerDir && o.IndexDir == d.IndexDir {
				return nil, errors.Newf("httpapi: directories %q and %q have the same metric labels ledgerDir=%q indexDir=%q",
					o.path, path, d.LedgerDir, d.IndexDir)
			}
		}
		dir := &directory{Directory: d, path: path}
		s.dirs = append(s.dirs, dir)
		s.byPath[path] = dir
		s.paths = append(s.paths, path)
	}
	if err := s.registry.Register(newCollector(s)); err != nil {
		return nil, errors.Wrap(err, "httpapi: registering metrics")
	}
	if err := s.registry.Register(newMemoryCollector(s)); err != nil {
		return nil, errors.Wrap(err, "httpapi: registering the memory metrics")
	}
	if opts.Storage != nil {
		if err := s.registry.Register(newStorageCollector(opts.Storage, opts.EnableStatistics)); err != nil {
			return nil, errors.Wrap(err, "httpapi: registering the storage's metrics")
		}
		if err := s.registry.Register(newStateCollector(s)); err != nil {
			return nil, errors.Wrap(err, "httpapi: registering the state metric")
		}
		if err := s.registry.Register(newAdmissionCollector(s.admission)); err != nil {
			return nil, errors.Wrap(err, "httpapi: registering the admission metrics")
		}
	}
	if opts.Journals != nil {
		if err := s.registry.Register(newJournalCollector(opts.Journals)); err != nil {
			return nil, errors.Wrap(err, "httpapi: registering the journals' metrics")
		}
	}
	if opts.GC != nil {
		if err := s.registry.Register(newGCCollector(opts.GC)); err != nil {
			return nil, errors.Wrap(err, "httpapi: registering the garbage collectors' metrics")
		}
	}
	s.metrics = metricsHandler{gatherer: s.registry, log: s.log}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.mux = http.NewServeMux()
	s.mux.HandleFunc(PathEntryLocationCompact, s.serveEntryLocationCompact)
	s.mux.HandleFunc(PathGCDetails, s.serveGCDetails)
	s.mux.HandleFunc(PathState, s.serveState)
	s.mux.HandleFunc(PathBookieInfo, s.serveBookieInfo)
	if opts.Settings != nil {
		s.mux.HandleFunc(PathServerConfig, s.serveServerConfig)
	}
	if opts.Storage != nil {
		s.mux.HandleFunc(PathLedgerEntry, s.serveLedgerEntry)
		s.mux.HandleFunc(PathLedgerLastEntry, s.serveLedgerLastEntry)
		s.mux.HandleFunc(PathLedger, s.serveLedger)
		s.mux.HandleFunc(PathCheckpoint, s.serveCheckpoint)
		s.mux.HandleFunc(PathIndexCheckpoint, s.serveIndexCheckpoint)
		s.mux.HandleFunc(PathStateReadOnly, s.serveStateReadOnly)
	}
	if opts.GC != nil {
		s.registerGC()
	}
	if opts.Journals != nil {
		s.mux.HandleFunc(PathLastLogMark, s.serveLastLogMark)
	}
	s.mux.HandleFunc(PathHeartbeat, s.serveHeartbeat)
	s.mux.HandleFunc(PathIsReady, s.serveIsReady)
	s.mux.HandleFunc(PathMetrics, s.serveMetrics)
	return s, nil
}

// ServeHTTP serves the admin API.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// MetricsHandler serves /metrics: the registry in upstream's text format.
// serve mounts it on the prometheusStatsHttpPort listener too.
func (s *Service) MetricsHandler() http.Handler { return s.metrics }

// Registry returns the registry /metrics serves, for the caller to add its
// own collectors (such as the Go runtime's).
func (s *Service) Registry() *prometheus.Registry { return s.registry }

// Close cancels the running compactions and waits for them to return. The
// compaction endpoint skips triggers after Close. It does not close the
// indexes.
func (s *Service) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
}

// lookup resolves an index path as a client wrote it: exactly, after
// filepath.Clean, or absolute.
func (s *Service) lookup(path string) *directory {
	if d, ok := s.byPath[path]; ok {
		return d
	}
	clean := filepath.Clean(path)
	for _, d := range s.dirs {
		if filepath.Clean(d.path) == clean {
			return d
		}
	}
	// The absolute form of a relative index path, and a relative form of
	// an absolute one, both resolved against the working directory, which
	// is what a relative directory of the configuration is relative to.
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil
	}
	for _, d := range s.dirs {
		if da, err := filepath.Abs(d.path); err == nil && da == abs {
			return d
		}
	}
	return nil
}

// serveHeartbeat answers "OK", as upstream's HeartbeatService, while the
// storage can serve; 503 with why when it cannot (see health). Like
// upstream's, it answers every method alike.
func (s *Service) serveHeartbeat(w http.ResponseWriter, r *http.Request) {
	if err := s.health(); err != nil {
		writeText(w, http.StatusServiceUnavailable, "Unavailable: "+err.Error()+"\n")
		return
	}
	writeText(w, http.StatusOK, "OK\n")
}

// serveIsReady answers "OK" when the bookie is ready to serve, as
// upstream's IsReadyService, and 503 with why otherwise.
func (s *Service) serveIsReady(w http.ResponseWriter, r *http.Request) {
	if !allowGet(w, r, msgIsReadyMethod) {
		return
	}
	if err := s.health(); err != nil {
		writeText(w, http.StatusServiceUnavailable, "Bookie is not ready: "+err.Error())
		return
	}
	writeText(w, http.StatusOK, "OK")
}

// healthChecker is implemented by a storage or an index that can tell
// whether it can serve (*bookie.Storage, *entrylocation.Index).
type healthChecker interface {
	Health() error
}

// health returns why the service cannot serve, or nil: it is shutting
// down, or the storage or an index is closed or stopped by a sticky engine
// error (a write it cannot make durable).
func (s *Service) health() error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return errors.New("the service is shutting down")
	}
	if h, ok := s.opts.Storage.(healthChecker); ok {
		if err := h.Health(); err != nil {
			return err
		}
	}
	for _, d := range s.dirs {
		if h, ok := d.Index.(healthChecker); ok {
			if err := h.Health(); err != nil {
				return err
			}
		}
	}
	return nil
}

// serveState describes the service, in the shape of upstream's
// BookieStateService plus the directories.
func (s *Service) serveState(w http.ResponseWriter, r *http.Request) {
	if !allowGet(w, r, msgStateMethod) {
		return
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	readOnly, _ := s.readOnly()
	dirs := make([]any, len(s.dirs))
	for i, d := range s.dirs {
		obj := jsonObject{
			{"ledgerDir", d.LedgerDir},
			{"indexDir", d.IndexDir},
			{"entryLocationDBPath", d.path},
		}
		if d.Space != nil {
			full, why := d.Space.Full()
			obj = append(obj, jsonField{"full", full})
			if full {
				obj = append(obj, jsonField{"fullReason", why})
			}
		}
		dirs[i] = obj
	}
	writeJSON(w, http.StatusOK, jsonObject{
		{"running", !closed},
		{"readOnly", readOnly},
		{"shuttingDown", closed},
		{"availableForHighPriorityWrites", !closed && !readOnly},
		{"directories", dirs},
	})
}

// serveServerConfig lists the effective configuration keys.
func (s *Service) serveServerConfig(w http.ResponseWriter, r *http.Request) {
	if !allowGet(w, r, msgServerConfigMethod) {
		return
	}
	keys := make([]string, 0, len(s.opts.Settings))
	for k := range s.opts.Settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	obj := make(jsonObject, len(keys))
	for i, k := range keys {
		obj[i] = jsonField{k, s.opts.Settings[k]}
	}
	writeJSON(w, http.StatusOK, obj)
}

// serveMetrics serves the registry in Prometheus text format. Other
// methods than GET get 403, as upstream's MetricsService answers.
func (s *Service) serveMetrics(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		methodNotServed(w, http.StatusForbidden, "GET, HEAD", r.Method+" is forbidden. Should be GET method")
		return
	}
	s.metrics.ServeHTTP(w, r)
}

// uniformDelay draws a delay uniformly from [0, interval).
func uniformDelay(interval time.Duration) time.Duration {
	if interval <= 0 {
		return 0
	}
	return rand.N(interval)
}
