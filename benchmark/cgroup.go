package benchmark

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/errors"
)

// memoryCgroup is a memory cgroup that the disk-bound mode creates under
// the bench's own when --disk-bound-memory asks for a container's limit:
// the reader runs in it, its heap and its page cache charged together,
// and is killed if they need more than the limit once the page cache is
// reclaimed. Limits are hierarchical: a child of the bench's own cgroup
// never gets more than the bench itself may use.
//
// cgroup v2 (memory.max, memory.peak, memory.events) and v1 (the memory
// controller's memory.limit_in_bytes, memory.max_usage_in_bytes,
// memory.oom_control) are both handled.
type memoryCgroup struct {
	dir string
	v2  bool
}

// cgroupSeq names the cgroups one bench process creates.
var cgroupSeq atomic.Int64

// newMemoryCgroup creates a memory cgroup below the calling process's own,
// with no limit of its own yet.
func newMemoryCgroup() (*memoryCgroup, error) {
	parent, v2, err := ownMemoryCgroup()
	if err != nil {
		return nil, errors.Wrap(err, "disk-bound mode needs a writable memory cgroup (Linux, as root, cgroup v1 or v2 with the memory controller)")
	}
	if v2 {
		// A child gets the memory controller only if its parent hands it
		// down; the kernel refuses that in a non-root cgroup that has
		// processes of its own ("no internal processes").
		if err := enableV2Memory(parent); err != nil {
			return nil, errors.Wrapf(err, "disk-bound mode: enabling the memory controller below %s", parent)
		}
	}
	dir := filepath.Join(parent, fmt.Sprintf("bookie-index-bench-%d-%d", os.Getpid(), cgroupSeq.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, errors.Wrapf(err, "disk-bound mode: creating the memory cgroup %s", dir)
	}
	cg := &memoryCgroup{dir: dir, v2: v2}
	// Without swap a reader's heap stays in memory and only page cache can
	// give way (absent on kernels built without swap).
	var werr error
	if v2 {
		if _, err := os.Stat(filepath.Join(dir, "memory.swap.max")); err == nil {
			werr = cg.write("memory.swap.max", "0")
		}
	} else {
		werr = cg.write("memory.swappiness", "0")
	}
	if werr != nil {
		_ = cg.remove()
		return nil, werr
	}
	return cg, nil
}

func (cg *memoryCgroup) write(name, value string) error {
	return errors.Wrapf(os.WriteFile(filepath.Join(cg.dir, name), []byte(value), 0o644), "memory cgroup %s: %s = %s", cg.dir, name, value)
}

// setLimit sets a hard limit: a process that needs more than it once the
// page cache is reclaimed is killed (memory.max, memory.limit_in_bytes).
func (cg *memoryCgroup) setLimit(limitBytes int64) error {
	if cg.v2 {
		return cg.write("memory.max", strconv.FormatInt(limitBytes, 10))
	}
	return cg.write("memory.limit_in_bytes", strconv.FormatInt(limitBytes, 10))
}

// procsFile is the file a process writes its pid to to join the cgroup.
func (cg *memoryCgroup) procsFile() string { return filepath.Join(cg.dir, "cgroup.procs") }

// peakBytes is the most the cgroup has charged (memory and page cache).
func (cg *memoryCgroup) peakBytes() int64 {
	name := "memory.max_usage_in_bytes"
	if cg.v2 {
		name = "memory.peak"
	}
	b, err := os.ReadFile(filepath.Join(cg.dir, name))
	if err != nil {
		return 0
	}
	v, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return v
}

// oomKills is how many processes the kernel killed in the cgroup for
// want of memory (-1: the kernel does not say).
func (cg *memoryCgroup) oomKills() int64 {
	name := "memory.oom_control"
	if cg.v2 {
		name = "memory.events"
	}
	b, err := os.ReadFile(filepath.Join(cg.dir, name))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "oom_kill" {
			v, _ := strconv.ParseInt(f[1], 10, 64)
			return v
		}
	}
	return -1
}

// remove deletes the cgroup once its processes have exited (its page
// cache charges go to the parent).
func (cg *memoryCgroup) remove() error {
	var err error
	for i := 0; i < 50; i++ {
		if err = os.Remove(cg.dir); err == nil || os.IsNotExist(err) {
			return nil
		}
		time.Sleep(20 * time.Millisecond) // a process that just exited may still be listed
	}
	return errors.Wrapf(err, "removing the memory cgroup %s", cg.dir)
}

// ownMemoryCgroup finds the directory of the calling process's memory
// cgroup: the v1 memory controller's if mounted, else the v2 one's.
func ownMemoryCgroup() (dir string, v2 bool, err error) {
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", false, errors.Wrap(err, "reading /proc/self/cgroup")
	}
	var v1Path, v2Path string
	haveV2 := false
	for _, line := range strings.Split(strings.TrimSpace(string(self)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			v2Path, haveV2 = parts[2], true
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == "memory" {
				v1Path = parts[2]
			}
		}
	}
	mounts, err := cgroupMounts()
	if err != nil {
		return "", false, err
	}
	if m, ok := mounts["memory"]; ok && v1Path != "" {
		return filepath.Join(m.dir, strings.TrimPrefix(v1Path, m.root)), false, nil
	}
	if m, ok := mounts[""]; ok && haveV2 {
		dir := filepath.Join(m.dir, strings.TrimPrefix(v2Path, m.root))
		ctrl, err := os.ReadFile(filepath.Join(m.dir, "cgroup.controllers"))
		if err != nil || !strings.Contains(" "+strings.TrimSpace(string(ctrl))+" ", " memory ") {
			return "", false, errors.Newf("cgroup v2 at %s has no memory controller", m.dir)
		}
		return dir, true, nil
	}
	return "", false, errors.New("no memory cgroup mounted (/proc/self/mountinfo)")
}

type cgroupMount struct{ dir, root string }

// cgroupMounts maps "memory" to the v1 memory controller's mount and ""
// to the v2 hierarchy's, from /proc/self/mountinfo.
func cgroupMounts() (map[string]cgroupMount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, errors.Wrap(err, "reading /proc/self/mountinfo")
	}
	defer f.Close()
	out := map[string]cgroupMount{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options ... - fstype source superoptions
		fields := strings.Fields(sc.Text())
		sep := -1
		for i, f := range fields {
			if f == "-" {
				sep = i
				break
			}
		}
		if sep < 5 || sep+3 > len(fields) {
			continue
		}
		root, mnt, fstype := fields[3], fields[4], fields[sep+1]
		switch fstype {
		case "cgroup2":
			if _, ok := out[""]; !ok {
				out[""] = cgroupMount{dir: mnt, root: root}
			}
		case "cgroup":
			for _, o := range strings.Split(fields[len(fields)-1], ",") { // the super options
				if o == "memory" {
					out["memory"] = cgroupMount{dir: mnt, root: root}
				}
			}
		}
	}
	return out, errors.Wrap(sc.Err(), "reading /proc/self/mountinfo")
}

// enableV2Memory hands the memory controller down from dir to its
// children if it does not already.
func enableV2Memory(dir string) error {
	ctl := filepath.Join(dir, "cgroup.subtree_control")
	b, err := os.ReadFile(ctl)
	if err != nil {
		return err
	}
	if strings.Contains(" "+strings.TrimSpace(string(b))+" ", " memory ") {
		return nil
	}
	return os.WriteFile(ctl, []byte("+memory"), 0o644)
}
