package vfs

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"strings"
)

// CrashOptions says what CrashClone does with bytes that were written but
// never synced.
type CrashOptions struct {
	// Rand chooses how much of each unsynced tail survives when
	// KeepUnsyncedTail is set. If it is nil, the whole tail survives (the
	// kernel happened to write everything back before the power went).
	Rand *rand.Rand
	// KeepUnsyncedTail simulates torn writes: a file whose only unsynced
	// change is an append keeps its synced bytes plus a prefix of the
	// appended ones. A file with any other unsynced change (a truncation by
	// Create, a WriteAt over its bytes) keeps exactly its synced bytes, as
	// it does when this is unset.
	KeepUnsyncedTail bool
}

// CrashClone returns a new, independent MemFS holding what a machine would
// find after losing power at this instant: every directory has the entries
// of its last sync and every file the bytes of its last sync (plus a torn
// tail if opts asks for one). Files open on fs keep working on fs only, and
// no locks are held in the clone. The clone has fs's capacity.
//
// Directories are visited in name order, so a seeded opts.Rand gives
// reproducible results.
func (fs *MemFS) CrashClone(opts CrashOptions) *MemFS {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	c := crashCloner{opts: opts, clones: map[*memNode]*memNode{}}
	clone := NewMem()
	clone.mu.root = c.clone(fs.mu.root)
	clone.mu.capacity = fs.mu.capacity // the same disk
	clone.mu.usedStale = true
	return clone
}

type crashCloner struct {
	opts CrashOptions
	// clones maps each original inode to its copy, so that an inode the
	// synced state reaches under two names stays one inode.
	clones map[*memNode]*memNode
}

func (c *crashCloner) clone(n *memNode) *memNode {
	if clone, ok := c.clones[n]; ok {
		return clone
	}
	if n.isDir {
		clone := newDirNode()
		c.clones[n] = clone
		for _, name := range slices.Sorted(maps.Keys(n.syncedEntries)) {
			child := c.clone(n.syncedEntries[name])
			clone.entries[name] = child
			clone.syncedEntries[name] = child
		}
		return clone
	}
	data := n.syncedData
	if c.opts.KeepUnsyncedTail && len(n.data) > len(data) && bytes.HasPrefix(n.data, data) {
		tail := len(n.data) - len(data)
		if c.opts.Rand != nil {
			tail = c.opts.Rand.Intn(tail + 1)
		}
		data = n.data[:len(data)+tail]
	}
	data = slices.Clone(data)
	clone := &memNode{data: data, syncedData: data[:len(data):len(data)]}
	c.clones[n] = clone
	return clone
}

// String lists the tree, one entry per line, with each file's current and
// synced sizes and a note on every name whose current state is not yet
// durable. It is meant for test failure messages:
//
//	/db/
//	/db/000001.log size=120 synced=64
//	/db/CURRENT size=16 synced=16 [name not durable]
//	/db/OLD size=5 synced=5 [removed; name durable until dir sync]
func (fs *MemFS) String() string {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	var b strings.Builder
	b.WriteString("/\n")
	dumpDir(&b, fs.mu.root, "/", map[*memNode]bool{})
	return b.String()
}

func dumpDir(b *strings.Builder, dir *memNode, path string, seen map[*memNode]bool) {
	seen[dir] = true
	names := slices.Collect(maps.Keys(dir.entries))
	for name := range dir.syncedEntries {
		if _, ok := dir.entries[name]; !ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		cur, synced := dir.entries[name], dir.syncedEntries[name]
		n := cur
		if n == nil {
			n = synced
		}
		p := path + name
		if n.isDir {
			p += "/"
			b.WriteString(p)
		} else {
			fmt.Fprintf(b, "%s size=%d synced=%d", p, len(n.data), len(n.syncedData))
		}
		switch {
		case cur == nil:
			b.WriteString(" [removed; name durable until dir sync]")
		case synced == nil:
			b.WriteString(" [name not durable]")
		case cur != synced:
			b.WriteString(" [replaced; old inode durable until dir sync]")
		}
		b.WriteByte('\n')
		if cur != nil && cur.isDir && !seen[cur] {
			dumpDir(b, cur, p, seen)
		}
	}
}
