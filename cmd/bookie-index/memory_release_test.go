package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMemoryReleaser: memory is released each time the checkpoints have
// written the threshold since the last release, and once more when writes
// have stopped for the quiet time; never while nothing happens.
func TestMemoryReleaser(t *testing.T) {
	t0 := time.Unix(0, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	m := newMemoryReleaser(100, 5*time.Second, t0)
	for s, c := range []struct {
		written int64
		release bool
	}{
		{0, false},   // idle from the start: nothing to give back
		{0, false},   //
		{60, false},  // below the threshold
		{120, true},  // 120 since the last release
		{150, false}, //
		{150, false}, // quiet for 1 s
		{150, false},
		{150, false},
		{150, false},
		{150, true}, // quiet for 5 s: the idle release
		{150, false},
		{150, false}, // and only one
		{400, true},  // a burst
		{400, false},
		{400, false},
		{400, false},
		{400, false},
		{400, true}, // quiet again: the caches' chunks are gone by now
		{400, false},
	} {
		require.Equal(t, c.release, m.sample(c.written, at(s)), "second %d, written %d", s, c.written)
	}
}
