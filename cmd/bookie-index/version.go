package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// commit is the VCS commit a build names when the go command could not
// stamp one (-buildvcs=false, a source tree without .git):
//
//	go build -ldflags "-X main.commit=$(git rev-parse HEAD)" ./cmd/bookie-index
//
// Empty otherwise. The go command's own stamp wins when there is one.
var commit string

// versionLine is what --version prints: the module version (as the go
// command stamped it: a tag, a pseudo-version, or "(devel)" for a build in
// the source tree), the VCS commit and whether the tree had changes, and
// the Go version that built the binary. A build without VCS information
// says so, and how to get it, rather than "unknown".
func versionLine() string {
	version, revision, modified := "(devel)", "", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	var c string
	switch {
	case revision != "":
		c = "commit " + revision
		if modified {
			c += " (modified)"
		}
	case strings.TrimSpace(commit) != "":
		c = "commit " + strings.TrimSpace(commit) + " (from -ldflags)"
	default:
		c = `built without VCS information (-buildvcs=false, or no .git): build with -ldflags "-X main.commit=$(git rev-parse HEAD)" to record the commit`
	}
	return fmt.Sprintf("bookie-index %s, %s, %s %s/%s", version, c, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
