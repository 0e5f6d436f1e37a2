//go:build !linux

package vfs

// Datasync implements File: without fdatasync(2), a full sync.
func (f osFile) Datasync() error { return f.File.Sync() }
