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

	"github.com/bookie-index/bookie-index/internal/procmem"
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
	s.hwm = procmem.ResetPeak()
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
	rss := procmem.ResidentBytes()
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
		s.peak = max(s.peak, procmem.PeakResidentBytes())
	}
	return s.peak
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
