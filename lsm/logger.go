package lsm

import "log/slog"

// dbLogger returns the logger of the DB in dir: l with db=dir on every
// line (a bookie runs two DBs per directory, and their lines go to one
// stream), or a discarding one when l is nil.
func dbLogger(l *slog.Logger, dir string) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l.With("db", dir)
}
