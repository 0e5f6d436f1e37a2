//go:build !race

package record

// exhaustiveStride is 1: every truncation point and every flipped byte.
const exhaustiveStride = 1
