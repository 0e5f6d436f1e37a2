package benchmark

import (
	"os"
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

// rssSampler tracks the peak resident memory while it runs.
type rssSampler struct {
	stop chan struct{}
	done sync.WaitGroup
	mu   sync.Mutex
	peak int64
}

func startRSSSampler() *rssSampler {
	s := &rssSampler{stop: make(chan struct{})}
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
	return s.peak
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
