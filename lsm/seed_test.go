package lsm

import (
	"flag"
	"math/rand"
	"testing"
	"time"
)

var testSeed = flag.Int64("seed", 0, "seed of the randomized tests that log one, to replay a logged run (0: from the clock)")

// newTestRand returns a generator seeded from -seed, or from the clock,
// and logs the seed so that a failure can be replayed with -seed.
func newTestRand(t testing.TB) *rand.Rand {
	seed := *testSeed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	t.Logf("seed %d (replay with -seed %d)", seed, seed)
	return rand.New(rand.NewSource(seed))
}
