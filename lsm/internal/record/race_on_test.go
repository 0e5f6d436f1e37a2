//go:build race

package record

// exhaustiveStride thins the single-goroutine exhaustive tests under the race
// detector, which slows byte copying tenfold and finds nothing in them.
const exhaustiveStride = 5
