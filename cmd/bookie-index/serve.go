package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/bookie/journaled"
	"github.com/bookie-index/bookie-index/conf"
	"github.com/bookie-index/bookie-index/httpapi"
	"github.com/cockroachdb/errors"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// shutdownTimeout bounds how long serve waits for HTTP requests in
// progress when it stops.
const shutdownTimeout = 10 * time.Second

// configFlags are the flags every command that reads bk_server.conf takes.
type configFlags struct {
	path      string
	overrides map[string]string
}

// register adds --conf, --set, --log-level and --log-format to fs.
func (f *configFlags) register(fs *flag.FlagSet) {
	f.overrides = map[string]string{}
	fs.Func("conf", "bk_server.conf to read (default: the embedded one)", func(path string) error {
		if f.path != "" {
			return errors.Newf("given twice (%s and %s)", f.path, path)
		}
		f.path = path
		return nil
	})
	fs.Func("set", "override a configuration key: --set key=value (repeatable)", func(arg string) error {
		k, v, err := conf.ParseOverride(arg)
		if err != nil {
			return err
		}
		f.overrides[k] = v
		return nil
	})
	f.registerLogFlags(fs)
}

// loadConfigCommand parses the arguments of a command that takes
// --conf, --set and the log flags (and the flags extra registers, whose
// synopsis is extraSynopsis), answering -h with its usage (its first line,
// then help), and loads the configuration.
func loadConfigCommand(name, help string, args []string, stderr io.Writer, extra ...commandFlags) (*conf.Config, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	var cf configFlags
	cf.register(fs)
	synopsis := ""
	for _, e := range extra {
		e.register(fs)
		synopsis += " " + e.synopsis
	}
	pos, err := parseFlags(fs, args, stderr)
	if err != nil {
		return nil, withHelpHeader(err, "usage: bookie-index "+name+" [--conf FILE] [--set key=value ...] [--log-level LEVEL] [--log-format text|json]"+synopsis+"\n\n"+help+"\n")
	}
	if len(pos) > 0 {
		return nil, usageErrorf("unexpected argument %q", pos[0])
	}
	return cf.load()
}

// load reads the configuration: the file (or the embedded default), the
// process's BK_<key> environment variables, then the --set overrides. The
// ledger and index directories come back absolute.
func (f *configFlags) load() (*conf.Config, error) {
	c, err := conf.Load(conf.LoadOptions{Path: f.path, Environment: true, Overrides: f.overrides})
	if err != nil {
		return nil, errors.Wrap(err, "configuration")
	}
	if err := c.AbsoluteDirectories(); err != nil {
		return nil, errors.Wrap(err, "configuration")
	}
	return c, nil
}

// runServe runs the service until SIGINT or SIGTERM.
func runServe(args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return serve(ctx, stop, args, stderr, nil)
}

// serve runs the service until ctx is done. stopSignals, called once ctx
// is done, restores the default signal handling, so that a second signal
// kills a shutdown that hangs. ready, if not nil, receives the admin
// server's address once it listens ("" when it is disabled).
func serve(ctx context.Context, stopSignals func(), args []string, stderr io.Writer, ready func(addr string)) error {
	c, err := loadConfigCommand("serve", "Runs the ledger storage of every ledger directory (entry logs, entry location and\n"+
		"ledgers indexes, checkpoints every flushInterval) and the admin HTTP server with\n"+
		"its data API until SIGINT or SIGTERM. Without --conf it uses the embedded bk_server.conf\n"+
		"(admin server on 127.0.0.1:8080, data under ./data). BK_<key> environment\n"+
		"variables override the file; --set overrides everything.", args, stderr)
	if err != nil {
		return err
	}
	log, err := newLogger(c, stderr, slog.LevelInfo)
	if err != nil {
		return err
	}
	if c.HTTPServerEnabled {
		if err := checkAdminExposure(ctx, c); err != nil {
			return err
		}
	}
	log.Info("bookie-index starting", "config", c.Source, "ledgerDirectories", strings.Join(c.LedgerDirectories, ","),
		"indexDirectories", strings.Join(c.IndexDirectories, ","))
	logConfigNotes(log, c)

	// Bind the ports first: a port in use is found before the storage
	// opens (or creates) any directory.
	var adminLn net.Listener
	var tlsConfig *tls.Config
	if c.HTTPServerEnabled {
		if c.HTTPServerTLSEnable {
			if tlsConfig, err = c.AdminTLSConfig(); err != nil {
				return err
			}
		}
		addr := net.JoinHostPort(c.HTTPServerHost, strconv.Itoa(c.HTTPServerPort))
		if adminLn, err = net.Listen("tcp", addr); err != nil {
			return errors.Wrapf(err, "admin HTTP server (httpServerHost, httpServerPort): listening on %s", addr)
		}
	}
	metricsLn, err := listenMetrics(c, log)
	if err != nil {
		if adminLn != nil {
			_ = adminLn.Close()
		}
		return err
	}
	closeListeners := func() {
		for _, ln := range []net.Listener{adminLn, metricsLn} {
			if ln != nil {
				_ = ln.Close()
			}
		}
	}

	// With readOnlyModeEnabled=false a full or failing disk shuts the
	// service down, as upstream's bookie does.
	diskFailed := make(chan string, 1)
	storage, dirs, err := openStorage(c, log, func(readOnly bool, reason string) {
		if readOnly && !c.ReadOnlyModeEnabled {
			select {
			case diskFailed <- reason:
			default:
			}
		}
	})
	if err != nil {
		closeListeners()
		return err
	}
	closeIndexes := storage.Close
	svc, err := newService(c, dirs, storage, log)
	if err != nil {
		closeListeners()
		return errors.CombineErrors(err, closeIndexes())
	}

	var srv *http.Server
	served := make(chan error, 2)
	if adminLn != nil {
		srv = &http.Server{
			Handler:           svc,
			TLSConfig:         tlsConfig,
			ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout:       30 * time.Second,
			WriteTimeout:      60 * time.Second,
			IdleTimeout:       2 * time.Minute,
			MaxHeaderBytes:    64 << 10,
			ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		}
		if tlsConfig != nil {
			go func() { served <- errors.Wrap(srv.ServeTLS(adminLn, "", ""), "admin HTTPS server") }()
			leaf := tlsConfig.Certificates[0].Leaf
			log.Info("admin HTTPS server listening (client certificates required)", "addr", adminLn.Addr().String(),
				"certificate", leaf.Subject.String(), "notAfter", leaf.NotAfter.UTC().Format(time.RFC3339),
				"keyStore", c.HTTPServerKeyStorePath, "trustStore", c.HTTPServerTrustStorePath)
		} else {
			go func() { served <- errors.Wrap(srv.Serve(adminLn), "admin HTTP server") }()
			log.Info("admin HTTP server listening", "addr", adminLn.Addr().String())
		}
		if ready != nil {
			ready(adminLn.Addr().String())
		}
	} else {
		log.Info("admin HTTP server disabled (httpServerEnabled=false)")
		if ready != nil {
			ready("")
		}
	}
	stopMetrics := serveMetrics(metricsLn, c, svc, log, served)

	// Memory the checkpoints free goes back to the system (memory_release.go).
	releaseDone := make(chan struct{})
	go func() {
		defer close(releaseDone)
		releaseMemory(ctx, storage.Storage, c.WriteCacheMaxSizeMB<<20, c.FlushInterval, log)
	}()

	periodicDone := make(chan struct{})
	go func() {
		defer close(periodicDone)
		if c.EntryLocationCompactionInterval > 0 {
			svc.RunPeriodicCompaction(ctx, c.EntryLocationCompactionInterval)
		} else {
			log.Info("periodic entry location compaction disabled (entryLocationCompactionInterval <= 0)")
		}
	}()

	var serveErr error
	select {
	case <-ctx.Done():
		log.Info("shutting down", "reason", context.Cause(ctx))
	case serveErr = <-served:
		log.Error("an HTTP server failed; shutting down", "err", serveErr)
	case reason := <-diskFailed:
		serveErr = errors.Newf("the storage cannot take writes and readOnlyModeEnabled=false: %s", reason)
		log.Error("storage cannot take writes and read-only mode is disabled (readOnlyModeEnabled=false); shutting down", "reason", reason)
	}
	if stopSignals != nil {
		stopSignals()
	}

	// Stop taking requests, then stop the compactions, then close the
	// storage (a last checkpoint, then the indexes): nothing uses an index
	// once it is closed.
	if srv != nil {
		shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		if err := srv.Shutdown(shutdownCtx); err != nil {
			log.Warn("admin HTTP server did not stop in time; closing its connections", "err", err)
			_ = srv.Close()
		}
		cancel()
	}
	if stopMetrics != nil {
		stopMetrics()
	}
	svc.Close()
	<-periodicDone
	<-releaseDone
	if err := closeIndexes(); err != nil {
		log.Error("closing the storage", "err", err)
		return errors.CombineErrors(serveErr, err)
	}
	log.Info("stopped")
	return serveErr
}

// openStorage opens (creating if needed) the storage of every ledger
// directory — its entry logs, its entry location index at
// conf.LocationsPaths and its ledgers index; it checkpoints every
// flushInterval and purges deleted ledgers after each checkpoint and every
// gcWaitTime — behind its journals, which it replays first (an add is
// acknowledged once its journal holds it). It logs the settings the engine
// ignores.
func openStorage(c *conf.Config, log *slog.Logger, onReadOnly func(readOnly bool, reason string)) (*journaled.Storage, []httpapi.Directory, error) {
	opts, notes, err := storageOptions(c, log)
	if err != nil {
		return nil, nil, err
	}
	opts.OnReadOnly = onReadOnly
	opts.ForceReadOnly = c.ForceReadOnlyBookie
	mode := "bookie-conf (dbStorage_rocksDB_* keys)"
	if file, _ := c.EntryLocationOptionsFile(); file != "" {
		mode = "RocksDB OPTIONS file " + file
	}
	log.Info("entry location index options", "from", mode)
	for _, n := range notes {
		log.Info(optionNoteMessage(n), "option", n)
	}
	storage, err := openJournaled(c, opts, log)
	if err != nil {
		return nil, nil, err
	}
	var dirs []httpapi.Directory
	for _, d := range storage.Dirs() {
		dirs = append(dirs, httpapi.Directory{LedgerDir: d.LedgerDir(), IndexDir: d.IndexDir(), Index: d.LocationIndex(), IndexFiles: d, Space: d})
		log.Info("entry location index open", "path", d.LocationIndex().Path())
		logEffectiveOptions(log, d.LocationIndex().Path(), d.LocationIndex().DB())
	}
	log.Info("ledger storage open", "directories", len(dirs), "flushInterval", c.FlushInterval, "gcWaitTime", c.GCWaitTime)
	return storage, dirs, nil
}

// optionNoteMessage names what a note of the engine options says of its
// option: ignored, or clipped (or raised) to a value RocksDB would also
// have used, or taken with a remark.
func optionNoteMessage(note string) string {
	switch {
	case strings.Contains(note, ": ignored"):
		return "ignored option"
	case strings.Contains(note, ": clipped to "), strings.Contains(note, ": raised to "):
		return "option value clipped, as RocksDB clips it"
	}
	return "option taken with a note"
}

// openJournaled opens the storage with opts behind the journals of c,
// replaying them into it (serve and the offline gc: a tool that opened
// the storage without its journals would miss the adds only they hold).
func openJournaled(c *conf.Config, opts *bookie.Options, log *slog.Logger) (*journaled.Storage, error) {
	jopts := c.Journal
	jopts.Logger = log
	log.Info("journals", "directories", strings.Join(jopts.JournalDirectories, ","), "journalSyncData", !jopts.NoSyncData,
		"journalWriteData", !jopts.NoWriteData, "journalMaxGroupWaitMSec", max(jopts.MaxGroupWait, 0).Milliseconds(),
		"journalFlushWhenQueueEmpty", jopts.FlushWhenQueueEmpty)
	if jopts.NoWriteData {
		log.Warn("journalWriteData=false: entries are not journaled; an acknowledged add is durable only at the next checkpoint (flushInterval), and a crash loses the entries the write caches hold")
	} else if jopts.NoSyncData {
		log.Warn("journalSyncData=false: an add is acknowledged once its journal record is written to the operating system, not synced; a power loss can lose acknowledged adds (a crash of the process cannot)")
	}
	storage, err := journaled.Open(journaled.Options{Storage: opts, Journal: jopts})
	if errors.Is(err, bookie.ErrUnconverted) && c.Source != conf.EmbeddedServerConfName {
		// Name the command as this configuration runs it.
		return nil, errors.Wrapf(err, "opening the ledger storage (for this configuration: bookie-index migrate --conf %s)", c.Source)
	}
	if err != nil {
		return nil, errors.Wrap(err, "opening the ledger storage")
	}
	st := storage.Replayed()
	log.Info("journals open", "replayedRecords", st.Records, "replayedEntries", st.EntriesAdded, "lastLogMarks", fmt.Sprint(storage.Journals().LastLogMarks()))
	return storage, nil
}

// checkAdminExposure refuses an admin server that would take
// unauthenticated PUT and DELETE from the network: bound to an address
// that is not loopback (0.0.0.0, a routable address, a host name that
// resolves to one) with no httpServerAuthTokenFile and no TLS (whose
// client certificates authenticate), unless
// httpServerAllowUnauthenticated says another layer authenticates.
func checkAdminExposure(ctx context.Context, c *conf.Config) error {
	if c.HTTPServerAuthTokenFile != "" || c.HTTPServerAllowUnauthenticated || c.HTTPServerTLSEnable {
		// A token, another layer, or TLS's client certificates (required
		// whenever TLS is on) authenticate the clients.
		return nil
	}
	loopback, err := isLoopbackHost(ctx, c.HTTPServerHost)
	if loopback {
		return nil
	}
	why := "is not a loopback address"
	if err != nil {
		why = "does not resolve to loopback addresses only (" + err.Error() + ")"
	}
	return errors.Newf("admin HTTP server: httpServerHost=%s %s and httpServerAuthTokenFile is not set, so anyone who can reach it "+
		"could write and delete data; set httpServerAuthTokenFile to a file holding a bearer token, turn on httpServerTlsEnable "+
		"(client certificates), bind a loopback address, or set httpServerAllowUnauthenticated=true if a proxy or network policy "+
		"in front of it authenticates",
		c.HTTPServerHost, why)
}

// isLoopbackHost reports whether every address host stands for is a
// loopback address. An unspecified address (0.0.0.0, ::) is every
// interface, not loopback.
func isLoopbackHost(ctx context.Context, host string) (bool, error) {
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback(), nil
	}
	if strings.EqualFold(host, "localhost") {
		return true, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return false, err
	}
	for _, a := range addrs {
		if !a.IP.IsLoopback() {
			return false, nil
		}
	}
	return len(addrs) > 0, nil
}

// newService builds the admin API over the directories and the storage.
func newService(c *conf.Config, dirs []httpapi.Directory, storage *journaled.Storage, log *slog.Logger) (*httpapi.Service, error) {
	token, err := c.ReadAuthToken()
	if err != nil {
		return nil, err
	}
	if token != "" {
		log.Info("admin API: PUT and DELETE need the bearer token of httpServerAuthTokenFile", "file", c.HTTPServerAuthTokenFile)
	} else if c.HTTPServerAllowUnauthenticated {
		log.Warn("admin API: PUT and DELETE need no token (httpServerAllowUnauthenticated=true); whatever fronts it must authenticate", "httpServerHost", c.HTTPServerHost)
	}
	if limit := int64(storage.MaxEntrySize()); c.NettyMaxFrameSizeBytes > limit {
		// Said once at start, as the 413s will say it: the key set is not
		// the limit applied.
		log.Warn("the data API takes entries of at most half a directory's write cache, less than nettyMaxFrameSizeBytes: "+
			"larger entries get 413; raise dbStorage_writeCacheMaxSizeMb to take them",
			"nettyMaxFrameSizeBytes", c.NettyMaxFrameSizeBytes, "limit", limit,
			"dbStorage_writeCacheMaxSizeMb", c.WriteCacheMaxSizeMB, "directories", len(dirs))
	}
	registry := prometheus.NewRegistry()
	registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	var dataDirs []httpapi.DataDir
	for _, d := range c.DataDirectories() {
		dataDirs = append(dataDirs, httpapi.DataDir{Kind: d.Kind, Path: d.Path})
	}
	backupRoot := c.IndexCheckpointRootDirectory
	if backupRoot != "" {
		backupRoot = filepath.Clean(backupRoot)
	}
	return httpapi.New(httpapi.Options{
		Directories:           dirs,
		BookieID:              host,
		AuthToken:             token,
		EnableStatistics:      c.EnableStatistics,
		Settings:              withEffectiveOptions(c.Settings(), storage.Storage),
		Storage:               storage,
		GC:                    storage,
		Journals:              storage.Journals(),
		Registry:              registry,
		Logger:                log,
		MaxEntryBytes:         c.NettyMaxFrameSizeBytes,
		MaxEntryBytesInFlight: c.HTTPServerMaxEntryBytesInFlight,
		MaxAddsInProgress:     c.MaxAddsInProgressLimit,
		MaxReadsInProgress:    c.MaxReadsInProgressLimit,
		BackupRoot:            backupRoot,
		DataDirs:              dataDirs,
	})
}
