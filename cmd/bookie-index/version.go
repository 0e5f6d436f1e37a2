package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// versionLine is what --version prints: the module version (as the go
// command stamped it: a tag, a pseudo-version, or "(devel)" for a build in
// the source tree), the VCS commit and whether the tree had changes, and
// the Go version that built the binary.
func versionLine() string {
	version, commit := "(unknown)", "unknown"
	modified := false
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if modified {
		commit += " (modified)"
	}
	return fmt.Sprintf("bookie-index %s, commit %s, %s %s/%s", version, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
