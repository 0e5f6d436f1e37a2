package sstable

// Stats counts the work of the calls it is passed to, like RocksDB's
// PerfContext: blocks read from the file by kind, bytes read, and blocks
// served by the cache (or pinned in memory). A Stats belongs to one
// goroutine; the counters are plain integers. A nil *Stats counts nothing.
type Stats struct {
	FilterReads int64 // filter blocks (partitions or full filters) read from the file
	IndexReads  int64 // index blocks (partitions or single indexes) read from the file
	DataReads   int64 // data blocks read from the file
	BytesRead   int64 // bytes read from the file, trailers included
	CacheHits   int64 // blocks found in the block cache or pinned by the table

	FilterChecks    int64 // filter probes made by point lookups
	FilterNegatives int64 // probes that ruled the table out
	FilterSkips     int64 // lookups that skipped a filter block not in memory (filter_use.go)
}

// Add adds o's counters to s.
func (s *Stats) Add(o *Stats) {
	s.FilterReads += o.FilterReads
	s.IndexReads += o.IndexReads
	s.DataReads += o.DataReads
	s.BytesRead += o.BytesRead
	s.CacheHits += o.CacheHits
	s.FilterChecks += o.FilterChecks
	s.FilterNegatives += o.FilterNegatives
	s.FilterSkips += o.FilterSkips
}
