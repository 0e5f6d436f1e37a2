package bloom

import (
	"encoding/binary"
	"math"
	"math/rand"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

func entryKey(ledger, entry uint64) []byte {
	var k [16]byte
	binary.BigEndian.PutUint64(k[:8], ledger)
	binary.BigEndian.PutUint64(k[8:], entry)
	return k[:]
}

func TestNoFalseNegatives(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, bpk := range []int{1, 5, 10, 20} {
		for _, n := range []int{1, 7, 100, 5000} {
			var keys [][]byte
			var hashes []uint64
			for i := 0; i < n; i++ {
				k := make([]byte, rng.Intn(40))
				rng.Read(k)
				keys = append(keys, k)
				hashes = append(hashes, Hash(k))
			}
			f := Build(nil, hashes, bpk)
			require.NoError(t, Validate(f))
			require.Equal(t, FilterSize(n, bpk), len(f))
			for _, k := range keys {
				require.True(t, MayContain(f, Hash(k)), "bpk=%d n=%d key=%x", bpk, n, k)
			}
		}
	}
}

func TestEmptyFilterMatchesNothing(t *testing.T) {
	f := Build(nil, nil, 10)
	require.NoError(t, Validate(f))
	require.False(t, MayContain(f, Hash([]byte("x"))))
}

// theoreticalRate is the false-positive rate of a blocked Bloom filter: the
// keys per line follow a Poisson distribution, and a line holding j keys
// answers yes to a foreign key with probability (1-(1-1/512)^(j·k))^k.
func theoreticalRate(bitsPerKey, probes int) float64 {
	lambda := float64(lineBits) / float64(bitsPerKey)
	rate := 0.0
	p := math.Exp(-lambda) // P(j=0)
	for j := 0; j < 400; j++ {
		if j > 0 {
			p *= lambda / float64(j)
		}
		set := 1 - math.Pow(1-1.0/lineBits, float64(j*probes))
		rate += p * math.Pow(set, float64(probes))
	}
	return rate
}

func TestFalsePositiveRate(t *testing.T) {
	const n = 200000
	for _, bpk := range []int{6, 10, 16} {
		hashes := make([]uint64, 0, n)
		for i := 0; i < n; i++ {
			hashes = append(hashes, Hash(entryKey(uint64(i%1000), uint64(i/1000))))
		}
		f := Build(nil, hashes, bpk)
		fp := 0
		const probesN = 400000
		for i := 0; i < probesN; i++ {
			// Keys of the same shape, absent: entries beyond those added.
			if MayContain(f, Hash(entryKey(uint64(i%1000), uint64(1_000_000+i)))) {
				fp++
			}
		}
		measured := float64(fp) / probesN
		want := theoreticalRate(bpk, ProbesForBitsPerKey(bpk))
		t.Logf("bits/key=%d probes=%d measured=%.5f theoretical=%.5f ratio=%.3f",
			bpk, ProbesForBitsPerKey(bpk), measured, want, measured/want)
		require.Less(t, measured, want*1.25, "bits/key %d", bpk)
	}
}

func TestValidateRejectsDamage(t *testing.T) {
	f := Build(nil, []uint64{1, 2, 3}, 10)
	for _, bad := range [][]byte{nil, f[:3], f[:len(f)-1], append(append([]byte(nil), f...), 0)} {
		err := Validate(bad)
		require.Error(t, err)
		require.True(t, errors.Is(err, base.ErrCorruption))
		require.True(t, MayContain(bad, 12345), "a damaged filter must not hide keys")
	}
	zeroProbes := append([]byte(nil), f...)
	zeroProbes[len(f)-trailerSize] = 0
	require.Error(t, Validate(zeroProbes))
}

func FuzzMayContain(f *testing.F) {
	f.Add(Build(nil, []uint64{1, 2, 3}, 10), uint64(2))
	f.Add([]byte{}, uint64(0))
	f.Fuzz(func(t *testing.T, filter []byte, h uint64) {
		_ = Validate(filter)
		_ = MayContain(filter, h)
	})
}

func BenchmarkMayContain(b *testing.B) {
	hashes := make([]uint64, 100000)
	for i := range hashes {
		hashes[i] = Hash(entryKey(uint64(i%100), uint64(i)))
	}
	f := Build(nil, hashes, 10)
	probe := Hash(entryKey(5, 123456789))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = MayContain(f, probe+uint64(i))
	}
}

func BenchmarkHash16(b *testing.B) {
	k := entryKey(42, 4242)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = Hash(k)
	}
}
