//go:build !unix

package bookie

// osDiskUsage is not measured on this platform: the disk counts as
// writable.
func osDiskUsage(string) (float64, error) { return 0, nil }
