package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/bookie-index/bookie-index/conf"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/cockroachdb/errors"
)

// The offline tools (check, rebuild, compact, migrate, gc) share a shape:
// they load the configuration, open what they need with the entry
// location engine's options, log only the engines' warnings (their lines
// would interleave with the tool's), and work on one directory after the
// other, each line naming it ("rebuild [2/3] <path>: ..."), going on past a
// directory that fails and exiting 1 if any did.

// offlineTool is a loaded offline tool: its configuration, the entry
// location engine's options and its logger.
type offlineTool struct {
	c      *conf.Config
	engine *lsm.Options
	log    *slog.Logger
}

// loadOfflineTool loads the configuration of the offline tool name (see
// loadConfigCommand) and resolves the engine's options and the logger.
func loadOfflineTool(name, help string, args []string, stderr io.Writer, extra ...commandFlags) (*offlineTool, error) {
	c, err := loadConfigCommand(name, help, args, stderr, extra...)
	if err != nil {
		return nil, err
	}
	engine, _, err := c.EntryLocationOptions()
	if err != nil {
		return nil, errors.Wrap(err, "entry location options")
	}
	log, err := newLogger(c, stderr, slog.LevelWarn)
	if err != nil {
		return nil, err
	}
	return &offlineTool{c: c, engine: engine, log: log}, nil
}

// eachDirectory runs f on each of paths in turn, with the prefix of its
// lines, "<name> [i/n] <path>"; a failure is printed on stderr after the
// prefix and the next directory runs. It stops once ctx is done, and
// returns how many directories failed.
func eachDirectory(ctx context.Context, name string, paths []string, stderr io.Writer, f func(i int, prefix string) error) int {
	failed := 0
	for i, path := range paths {
		prefix := fmt.Sprintf("%s [%d/%d] %s", name, i+1, len(paths), path)
		if err := f(i, prefix); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", prefix, err)
			failed++
		}
		if ctx.Err() != nil {
			break
		}
	}
	return failed
}

// directoriesFailed is a tool's error when failed of n directories failed,
// nil if none did.
func directoriesFailed(failed, n int) error {
	if failed > 0 {
		return errors.Newf("%d of %d directories failed", failed, n)
	}
	return nil
}

// offlineProgressEvery is how often check, rebuild and migrate report a
// directory's progress.
const offlineProgressEvery = 2 * time.Second

// progressThrottle returns a function that reports whether a progress line
// is due: forced, or the first call offlineProgressEvery after the last due
// one.
func progressThrottle() func(force bool) bool {
	last := time.Now()
	return func(force bool) bool {
		if !force && time.Since(last) < offlineProgressEvery {
			return false
		}
		last = time.Now()
		return true
	}
}
