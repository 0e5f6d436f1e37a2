package batch

import (
	"math/rand"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
)

// FuzzDecode feeds arbitrary bytes to Decode. It must never panic, must
// report only corruption, and whatever it accepts must read back without
// error and re-encode to exactly the same bytes.
//
//	go test -run=^$ -fuzz=FuzzDecode -fuzztime=30s ./lsm/internal/batch/
func FuzzDecode(f *testing.F) {
	rng := rand.New(rand.NewSource(5))
	for n := 0; n < 4; n++ {
		var b Batch
		build(&b, randomOps(rng, n*3))
		b.SetSeqNum(base.SeqNum(n * 1000))
		f.Add(b.Repr())
	}
	f.Add([]byte{})
	f.Add(header(1, 1))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecode(t, data)
	})
}
