//go:build race

package rocksdb

// raceEnabled: the race detector's build, where TestRocksDBJNIRegenerate
// (a Maven run the detector adds nothing to) skips.
const raceEnabled = true
