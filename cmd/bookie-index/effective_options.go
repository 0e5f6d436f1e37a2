package main

import (
	"log/slog"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/conf"
	"github.com/bookie-index/bookie-index/lsm"
)

// effectiveKeyPrefix starts the server_config keys of the effective engine
// options of the entry location indexes (every directory's index runs with
// the same options), next to the configured keys: in config-file mode the
// dbStorage_rocksDB_* keys are not what runs, and a RocksDB OPTIONS value
// may have been clipped.
const effectiveKeyPrefix = "bookieIndex.entryLocation."

// logConfigNotes logs what Load noticed of the keys it does not use: a
// summary line of the BookKeeper keys recognized but not used here, and a
// did-you-mean warning per key close to one of ours.
func logConfigNotes(log *slog.Logger, c *conf.Config) {
	for _, line := range c.UnusedKeys {
		log.Info("configuration: " + line)
	}
	for _, line := range c.KeyWarnings {
		log.Warn("configuration: " + line)
	}
}

// logEffectiveOptions logs the options an open index runs with, one line.
func logEffectiveOptions(log *slog.Logger, path string, db *lsm.DB) {
	settings := db.Settings()
	attrs := make([]any, 0, 1+len(settings))
	attrs = append(attrs, slog.String("path", path))
	for _, s := range settings {
		attrs = append(attrs, slog.String(s.Name, s.Value))
	}
	log.Info("entry location index effective options", attrs...)
}

// withEffectiveOptions returns the configured settings plus the effective
// engine options of the storage's entry location indexes.
func withEffectiveOptions(settings map[string]string, storage *bookie.Storage) map[string]string {
	if storage == nil || len(storage.Dirs()) == 0 {
		return settings
	}
	for _, s := range storage.Dirs()[0].LocationIndex().DB().Settings() {
		settings[effectiveKeyPrefix+s.Name] = s.Value
	}
	return settings
}
