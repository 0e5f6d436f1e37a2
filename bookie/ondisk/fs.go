package ondisk

import (
	"log/slog"
	"reflect"

	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// UseFS puts the engine of o on fs, the storage's one file system. An
// engine FS of its own is an error unless it is fs or vfs.Default, which
// lsm.DefaultOptions fills in. field names the option in the error.
func UseFS(o *lsm.Options, fs vfs.FS, field string) error {
	if o.FS != nil && !SameFS(o.FS, vfs.Default) && !SameFS(o.FS, fs) {
		return errors.Wrapf(entrylocation.ErrInvalidArgument, "bookie: %s is not the storage's file system: one FS holds the entry logs and the indexes; set Options.FS", field)
	}
	o.FS = fs
	return nil
}

// SameFS reports whether a and b are the same file system, without the
// panic of == on file systems of an incomparable type.
func SameFS(a, b vfs.FS) bool {
	t := reflect.TypeOf(a)
	return t == reflect.TypeOf(b) && t.Comparable() && a == b
}

// LocationsEngineOptions returns the engine options an offline tool
// (check, rebuild, migrate) opens or builds a locations index with: a copy
// of custom (nil: the engine's defaults) on fs, as UseFS allows, with every
// default filled in and logger if it has none. The caller's options are
// left as they are.
func LocationsEngineOptions(custom *lsm.Options, fs vfs.FS, logger *slog.Logger) (lsm.Options, error) {
	var o lsm.Options
	if custom != nil {
		o = *custom
	}
	if err := UseFS(&o, fs, "Engine.FS"); err != nil {
		return o, err
	}
	o.EnsureDefaults()
	if o.Logger == nil {
		o.Logger = logger
	}
	return o, nil
}
