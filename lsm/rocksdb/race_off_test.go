//go:build !race

package rocksdb

const raceEnabled = false
