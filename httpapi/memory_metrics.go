package httpapi

import (
	"github.com/bookie-index/bookie-index/internal/procmem"
	"github.com/prometheus/client_golang/prometheus"
)

// memoryCollector exports the process's memory by kind, summed over the
// directories, so that what an operator configured can be compared with
// what the process holds (docs/operations.md, "Capacity sizing"):
//
//   - block_cache: what the entry location indexes' block caches hold from
//     the system (their blocks live outside the Go heap);
//   - memtables: the bytes in the indexes' memtables (memtables of a
//     mebibyte or more are mapped outside the Go heap);
//   - write_cache and read_cache: the bytes the storage's caches hold;
//   - go_heap: what the Go runtime holds from the system (heap, stacks,
//     its own metadata) less the write and read caches, which live in it;
//   - other: the resident set less all of the above — the program's code,
//     the ledgers indexes' small engines, memtables retired but not yet
//     unmapped, page tables (Linux only, as is the resident set itself).
type memoryCollector struct {
	s        *Service
	byKind   *prometheus.Desc
	resident *prometheus.Desc
}

func newMemoryCollector(s *Service) *memoryCollector {
	return &memoryCollector{
		s: s,
		byKind: prometheus.NewDesc("bookie_index_memory_bytes",
			"Memory the process holds, by kind (block_cache, memtables, write_cache, read_cache, go_heap, other), summed over the directories.",
			[]string{"kind"}, nil),
		resident: prometheus.NewDesc("bookie_index_resident_memory_bytes",
			"The process's resident set size (Linux); the kinds of bookie_index_memory_bytes add up to it.", nil, nil),
	}
}

// Describe sends the descriptors.
func (c *memoryCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.byKind
	ch <- c.resident
}

// Collect reads the directories' figures, the runtime's and the kernel's.
func (c *memoryCollector) Collect(ch chan<- prometheus.Metric) {
	var blockCache, memtables, writeCache, readCache int64
	for _, d := range c.s.dirs {
		e := d.Index.Metrics().Engine
		blockCache += e.BlockCache.MappedBytes
		memtables += e.MemTableBytes
	}
	if st := c.s.opts.Storage; st != nil {
		for _, m := range st.Metrics() {
			writeCache += m.WriteCacheSize
			readCache += m.ReadCacheSize
		}
	}
	goHeap := max(procmem.GoRuntimeBytes()-writeCache-readCache, 0)
	kinds := []struct {
		kind  string
		bytes int64
	}{
		{"block_cache", blockCache}, {"memtables", memtables}, {"write_cache", writeCache},
		{"read_cache", readCache}, {"go_heap", goHeap},
	}
	var sum int64
	for _, k := range kinds {
		sum += k.bytes
		ch <- prometheus.MustNewConstMetric(c.byKind, prometheus.GaugeValue, float64(k.bytes), k.kind)
	}
	if rss := procmem.ResidentBytes(); rss > 0 {
		ch <- prometheus.MustNewConstMetric(c.byKind, prometheus.GaugeValue, float64(max(rss-sum, 0)), "other")
		ch <- prometheus.MustNewConstMetric(c.resident, prometheus.GaugeValue, float64(rss))
	}
}
