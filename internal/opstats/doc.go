// Package opstats counts operations and their latencies, as BookKeeper's
// OpStatsLogger does: a Recorder per operation keeps success and failure
// counts always and latency histograms when timed; Snapshot returns them as
// Stats. The entry location index, the bookie storage and the HTTP
// metrics exporter share these types.
//
// A latency histogram has NumLatencyBuckets buckets: one below 64ns, then
// four per power of two up to 2^38ns (about 4.6 minutes), the last also
// taking everything longer, so that a bucket's bounds are within 25% of
// each other and a quantile read from it (LatencyStats.Quantile) is at
// most 25% above the exact one. Recording is a few atomic adds, no lock and
// no allocation.
//
// Besides the whole-life histograms a Recorder keeps the latencies of
// rollover windows (Recorder.Rollover, upstream's
// prometheusStatsLatencyRolloverSeconds): Stats.SuccessWindow and
// FailureWindow are the last completed window's, which is what upstream's
// provider reads quantiles from. Windows are aligned on multiples of the
// rollover, two slots alternate, and the first add of a window clears its
// slot (window.go), so no goroutine rotates them.
//
// A Recorder may take values (sizes, counts) instead of latencies
// (Recorder.AddValue, upstream's registerSuccessfulValue): the same
// counts, sums and histograms, the values kept times ValueUnit so that
// small counts keep the histogram's resolution.
package opstats
