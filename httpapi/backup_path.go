package httpapi

import (
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// The rules a directory must follow to receive an index checkpoint
// (index_checkpoint?dir=). A checkpoint writes wherever the server may
// write, so the endpoint takes only a directory that is plainly a backup
// target:
//
//   - a clean absolute path: no NUL byte or other control character, no
//     ".." component (which, after a symbolic link, would not mean what
//     it reads), no component longer than NAME_MAX and no path longer
//     than PATH_MAX once the checkpoint's own names are added;
//   - on a real file system: not under /proc, /dev or /sys, before or
//     after symbolic links are resolved;
//   - resolved (symbolic links followed, as far as it exists), its
//     existing part a directory;
//   - under the backup root, if one is configured;
//   - outside every data directory (ledger, index, journal), and the
//     checkpoint's new directories neither inside one nor holding one;
//   - the checkpoint's directories must not exist (409).
//
// Anything else gets 400 naming the rule. The checks and the checkpoint
// are not atomic: a local user who can swap a directory for a symbolic
// link between them can redirect the checkpoint, as it could redirect
// any other process's writes; the rules keep remote clients' requests
// where they belong.

// BackupFS is what the index checkpoint endpoint needs to resolve a
// target directory on the file system the storage writes: OSBackupFS for
// the operating system's.
type BackupFS interface {
	// Abs returns an absolute form of a path (relative paths are the
	// working directory's).
	Abs(path string) (string, error)
	// Lstat describes a path without following a final symbolic link.
	Lstat(path string) (os.FileInfo, error)
	// EvalSymlinks returns an existing path with every symbolic link in
	// it resolved.
	EvalSymlinks(path string) (string, error)
}

// OSBackupFS is the operating system's file system.
type OSBackupFS struct{}

// Abs implements BackupFS.
func (OSBackupFS) Abs(path string) (string, error) { return filepath.Abs(path) }

// Lstat implements BackupFS.
func (OSBackupFS) Lstat(path string) (os.FileInfo, error) { return os.Lstat(path) }

// EvalSymlinks implements BackupFS.
func (OSBackupFS) EvalSymlinks(path string) (string, error) { return filepath.EvalSymlinks(path) }

// VFSBackupFS is a vfs.FS without symbolic links (vfs.MemFS): a path
// resolves to itself, and relative paths are the root's, as MemFS takes
// them.
type VFSBackupFS struct{ FS vfs.FS }

// Abs implements BackupFS.
func (v VFSBackupFS) Abs(path string) (string, error) { return filepath.Join("/", path), nil }

// Lstat implements BackupFS.
func (v VFSBackupFS) Lstat(path string) (os.FileInfo, error) { return v.FS.Stat(path) }

// EvalSymlinks implements BackupFS.
func (v VFSBackupFS) EvalSymlinks(path string) (string, error) {
	if _, err := v.FS.Stat(path); err != nil {
		return "", err
	}
	return filepath.Clean(path), nil
}

// Limits of Linux file names: a component of at most NAME_MAX bytes, a
// path of less than PATH_MAX.
const (
	nameMax = 255
	pathMax = 4096
)

// longestCheckpointFile is the longest name of a file an index
// checkpoint writes: a manifest, whose number can take 20 digits (a
// table's, NNNNNN.sst, keeps the number it has in the index).
const longestCheckpointFile = "MANIFEST-18446744073709551615"

// isControl reports whether r is an ASCII control character: a name
// holding one (a newline, an escape) is valid but no backup target an
// operator means.
func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// pseudoFileSystems are the kernel's file systems, never a backup target.
var pseudoFileSystems = []string{"/proc", "/dev", "/sys"}

// DataDir is a directory of the bookie's data, which no checkpoint may
// go into: Kind says which ("ledger directory", "index directory",
// "journal directory").
type DataDir struct {
	Kind, Path string
}

// backupRules checks index checkpoint targets.
type backupRules struct {
	fs   BackupFS
	root string // "" when none is configured
	data []DataDir
	// real says fs is the operating system's: the kernel's file
	// systems are refused.
	real bool
}

// refusal is why a target is refused: the status and the message.
type refusal struct {
	status int
	msg    string
}

func refuse(format string, args ...any) *refusal {
	return &refusal{http.StatusBadRequest, fmt.Sprintf(format, args...)}
}

// check validates dir, the raw query parameter, as the target of a
// checkpoint of n index directories, and returns it resolved.
func (b *backupRules) check(dir string, n int) (string, *refusal) {
	quoted := strconv.Quote(dir)
	switch {
	case dir == "":
		return "", refuse("Missing query parameter dir: the absolute path of a directory on the server; the checkpoints go into new directories under it.")
	case strings.IndexByte(dir, 0) >= 0:
		return "", refuse("Query parameter dir=%s holds a NUL byte: a path cannot.", quoted)
	case strings.IndexFunc(dir, isControl) >= 0:
		return "", refuse("Query parameter dir=%s holds a control character: give a plain path.", quoted)
	case !filepath.IsAbs(dir):
		return "", refuse("Query parameter dir=%s must be an absolute path on the server; the checkpoints go into new directories under it.", quoted)
	}
	for _, c := range strings.Split(dir, "/") {
		if c == ".." {
			return "", refuse("Query parameter dir=%s has a \"..\" component: give a clean absolute path.", quoted)
		}
		if len(c) > nameMax {
			return "", refuse("Query parameter dir=%s has a component of %d bytes: a file name has at most %d.", quoted, len(c), nameMax)
		}
	}
	clean := filepath.Clean(dir)
	longest := filepath.Join(clean, strconv.Itoa(max(n-1, 0)), "current", "locations.tmp", longestCheckpointFile)
	if len(longest) >= pathMax {
		return "", refuse("Query parameter dir=%s is too long: the checkpoint's files (%s) would have paths of %d bytes, the limit is %d.", quoted, longest, len(longest), pathMax-1)
	}
	if fsys := b.pseudoFS(clean); fsys != "" {
		return "", refuse("Query parameter dir=%s is under %s, a kernel file system: not a backup target.", quoted, fsys)
	}
	resolved, why := b.resolve(clean)
	if why != "" {
		return "", refuse("Query parameter dir=%s: %s.", quoted, why)
	}
	if fsys := b.pseudoFS(resolved); fsys != "" {
		return "", refuse("Query parameter dir=%s resolves to %s, under %s, a kernel file system: not a backup target.", quoted, resolved, fsys)
	}
	if b.root != "" {
		root, why := b.resolve(b.root)
		if why != "" {
			return "", &refusal{http.StatusInternalServerError, fmt.Sprintf("The backup root %s (indexCheckpointRootDirectory): %s.", b.root, why)}
		}
		if !within(resolved, root) {
			return "", refuse("Query parameter dir=%s (resolved: %s) is not under the backup root %s (indexCheckpointRootDirectory).", quoted, resolved, root)
		}
	}
	for _, d := range b.data {
		p, err := b.fs.Abs(d.Path)
		if err != nil {
			return "", &refusal{http.StatusInternalServerError, fmt.Sprintf("Cannot resolve %s %s: %v.", d.Kind, d.Path, err)}
		}
		p, why := b.resolve(filepath.Clean(p))
		if why != "" {
			return "", &refusal{http.StatusInternalServerError, fmt.Sprintf("The %s %s: %s.", d.Kind, d.Path, why)}
		}
		if within(resolved, p) {
			return "", refuse("Query parameter dir=%s (resolved: %s) is inside %s %s: a checkpoint goes outside the data directories.", quoted, resolved, d.Kind, p)
		}
		for i := range n {
			out := filepath.Join(resolved, strconv.Itoa(i))
			if within(out, p) || within(p, out) {
				return "", refuse("Query parameter dir=%s: the checkpoint of directory %d would go into %s, which overlaps %s %s: a checkpoint goes outside the data directories.", quoted, i, filepath.Join(out, "current"), d.Kind, p)
			}
		}
	}
	for i := range n {
		for _, name := range []string{"locations", "locations.tmp", "ledgers", "ledgers.tmp"} {
			p := filepath.Join(resolved, strconv.Itoa(i), "current", name)
			if _, err := b.fs.Lstat(p); err == nil {
				return "", &refusal{http.StatusConflict, fmt.Sprintf("Conflict: %s exists: a checkpoint goes into new directories (dir=%s).", p, quoted)}
			}
		}
	}
	return resolved, nil
}

// pseudoFS returns the kernel file system p is under, or "".
func (b *backupRules) pseudoFS(p string) string {
	if !b.real {
		return ""
	}
	for _, fsys := range pseudoFileSystems {
		if within(p, fsys) {
			return fsys
		}
	}
	return ""
}

// resolve returns the clean absolute path p with the symbolic links of its
// longest existing prefix resolved; that prefix must be a directory. It
// returns why not otherwise.
func (b *backupRules) resolve(p string) (string, string) {
	existing, rest := p, ""
	for {
		_, err := b.fs.Lstat(existing)
		if err == nil {
			break
		}
		parent := filepath.Dir(existing)
		if !errors.Is(err, fs.ErrNotExist) || parent == existing {
			return "", fmt.Sprintf("%s cannot be resolved: %s", existing, pathError(err))
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
	real, err := b.fs.EvalSymlinks(existing)
	if err != nil {
		return "", fmt.Sprintf("%s cannot be resolved (a symbolic link that leads nowhere, or in a loop?): %s", existing, pathError(err))
	}
	fi, err := b.fs.Lstat(real)
	if err != nil {
		return "", fmt.Sprintf("%s cannot be resolved: %s", existing, pathError(err))
	}
	if !fi.IsDir() {
		if real != existing {
			return "", fmt.Sprintf("%s (%s) is not a directory", existing, real)
		}
		return "", fmt.Sprintf("%s is not a directory", existing)
	}
	return filepath.Join(real, rest), ""
}

// pathError describes a file system error without repeating its path.
func pathError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Op + ": " + pe.Err.Error()
	}
	return err.Error()
}

// within reports whether path p is dir or under it (both clean).
func within(p, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}
