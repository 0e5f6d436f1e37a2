package main

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os/signal"
	"syscall"
	"time"

	"github.com/cockroachdb/errors"
)

// runServe runs the admin HTTP server until SIGINT or SIGTERM. The
// entry location indexes and the full BookKeeper-compatible API come with
// the engine; for now it serves /heartbeat and /api/v1/bookie/state.
func runServe(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:8080", "admin HTTP address (loopback by default)")
	pos, err := parseFlags(fs, args, stderr)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("unexpected argument %q", pos[0])
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	mux := http.NewServeMux()
	mux.HandleFunc("/heartbeat", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "OK\n")
	})
	mux.HandleFunc("/api/v1/bookie/state", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]bool{"running": true, "readOnly": false})
	})
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return errors.Wrapf(err, "listening on %s", *listen)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Info("bookie-index serving", "admin", ln.Addr().String())
	select {
	case err := <-served:
		return errors.Wrap(err, "admin server")
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return errors.Wrap(err, "stopping admin server")
	}
	log.Info("stopped")
	return nil
}
