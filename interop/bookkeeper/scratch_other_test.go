//go:build !unix

package bookkeeper

import "testing"

// scratchDir returns a directory for BookKeeper's databases during a trace.
func scratchDir(t *testing.T) string { return t.TempDir() }
