package vfs

// DiskUsage is what a file system says of its space (FS.DiskUsage), in
// bytes.
type DiskUsage struct {
	// ID identifies the file system holding the path among those of one
	// FS, so that directories sharing one are counted once.
	ID uint64
	// Total is the file system's size; Usable what an unprivileged writer
	// may still use (statfs's f_bavail, Java's File.getUsableSpace, which
	// BookKeeper reads).
	Total, Usable uint64
}

// UsedFraction returns the used fraction of the file system as BookKeeper
// computes it: 1 - usable/total (0 for a file system of no size).
func (u DiskUsage) UsedFraction() float64 {
	if u.Total == 0 {
		return 0
	}
	return 1 - float64(u.Usable)/float64(u.Total)
}

// UsedBytes returns the bytes an unprivileged writer cannot use: Total -
// Usable (the root-reserved blocks of a file system count as used).
func (u DiskUsage) UsedBytes() uint64 {
	return u.Total - min(u.Usable, u.Total)
}
