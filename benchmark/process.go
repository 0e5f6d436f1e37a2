package benchmark

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// processSample is the process's CPU and GC CPU so far.
type processSample struct {
	cpu   time.Duration // user + system, from getrusage
	gcCPU float64       // seconds, from the Go runtime
	total float64       // seconds of CPU the runtime accounts
}

func sampleProcess() processSample {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	s := processSample{cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano())}
	samples := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}, {Name: "/cpu/classes/total:cpu-seconds"}}
	metrics.Read(samples)
	if samples[0].Value.Kind() == metrics.KindFloat64 {
		s.gcCPU = samples[0].Value.Float64()
	}
	if samples[1].Value.Kind() == metrics.KindFloat64 {
		s.total = samples[1].Value.Float64()
	}
	return s
}

// goMemoryBytes is the memory the Go runtime holds from the system: all it
// mapped less what it gave back.
func goMemoryBytes() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64() - s[1].Value.Uint64())
}

// rssSampler measures the peak resident memory of a phase. It starts from
// the process's own memory: the garbage of earlier phases (the load's
// memtables, a previous cache) is collected and returned to the system
// first, since a phase that allocates nothing would not trigger the
// collection that frees it. The peak is the kernel's high-water mark
// (VmHWM, reset at the start through /proc/self/clear_refs), so that no
// spike between samples is missed; where the mark cannot be reset, it is
// the largest of samples taken every 100 ms.
type rssSampler struct {
	stop chan struct{}
	done sync.WaitGroup
	mu   sync.Mutex
	peak int64
	hwm  bool // VmHWM was reset at the start
}

func startRSSSampler() *rssSampler {
	debug.FreeOSMemory()
	s := &rssSampler{stop: make(chan struct{})}
	s.hwm = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			s.sample()
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *rssSampler) sample() {
	rss := residentBytes()
	s.mu.Lock()
	s.peak = max(s.peak, rss)
	s.mu.Unlock()
}

// finish stops sampling and returns the peak.
func (s *rssSampler) finish() int64 {
	close(s.stop)
	s.done.Wait()
	s.sample()
	if s.hwm {
		s.peak = max(s.peak, highWaterMark())
	}
	return s.peak
}

// highWaterMark reads the process's peak resident set size since the last
// reset (VmHWM of /proc/self/status; Linux), or 0.
func highWaterMark() int64 {
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

// residentBytes reads the process's resident set size (Linux).
func residentBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(b))
	if len(fields) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(fields[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// diskReadBytes is how many bytes this process has caused to be read from
// storage (/proc/self/io read_bytes: reads the page cache served are not
// in it), or -1 if the kernel does not say.
func diskReadBytes() int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "read_bytes: "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return -1
			}
			return n
		}
	}
	return -1
}
