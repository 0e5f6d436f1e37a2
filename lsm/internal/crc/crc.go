// Package crc computes the masked CRC-32C (Castagnoli) checksums stored in
// tables, the WAL and the MANIFEST. hash/crc32 uses the CPU's CRC32
// instruction for the Castagnoli polynomial where there is one.
//
// A stored checksum is masked (rotated and offset) so that the checksum of
// data that itself contains checksums stays strong. The mask is persisted in
// every file: do not change it.
package crc

import "hash/crc32"

var table = crc32.MakeTable(crc32.Castagnoli)

const maskDelta = 0xa282ead8

// Value returns the masked CRC-32C of data.
func Value(data []byte) uint32 { return Mask(crc32.Checksum(data, table)) }

// Extend returns the unmasked CRC-32C of data appended to bytes whose
// unmasked CRC is crc.
func Extend(crc uint32, data []byte) uint32 { return crc32.Update(crc, table, data) }

// Mask masks an unmasked CRC for storage.
func Mask(c uint32) uint32 { return ((c >> 15) | (c << 17)) + maskDelta }

// Unmask reverses Mask.
func Unmask(m uint32) uint32 {
	r := m - maskDelta
	return (r >> 17) | (r << 15)
}
