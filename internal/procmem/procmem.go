package procmem

import (
	"os"
	"runtime/metrics"
	"strconv"
	"strings"
)

// ResidentBytes is the process's resident set size (/proc/self/statm), or
// 0 where the kernel does not say.
func ResidentBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}

// PeakResidentBytes is the process's peak resident set size since it
// started or since the last ResetPeak (VmHWM of /proc/self/status), or 0
// where the kernel does not say.
func PeakResidentBytes() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(rest) // "123456 kB"
			if len(f) == 2 && f[1] == "kB" {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

// ResetPeak resets PeakResidentBytes to the current resident set
// (/proc/self/clear_refs), and reports whether it could.
func ResetPeak() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// GoRuntimeBytes is the memory the Go runtime holds from the system: all
// it mapped less what it gave back.
func GoRuntimeBytes() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64() - s[1].Value.Uint64())
}
