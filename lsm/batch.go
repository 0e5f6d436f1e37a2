package lsm

import "github.com/bookie-index/bookie-index/lsm/internal/batch"

// Batch is a group of writes applied atomically by DB.Apply: after a
// crash either all of it or none of it is visible. The zero value is an
// empty batch ready to use. Keys and values are copied in.
type Batch struct {
	b batch.Batch
}

// Set records key → value.
func (b *Batch) Set(key, value []byte) { b.b.Set(key, value) }

// Delete records the deletion of key.
func (b *Batch) Delete(key []byte) { b.b.Delete(key) }

// Merge records a merge operand for key, combined with the key's older
// value by the DB's Options.MergeOperator when the key is read (see
// MergeOperator). Apply refuses the batch, changing nothing, on a DB
// without a merge operator.
func (b *Batch) Merge(key, operand []byte) { b.b.Merge(key, operand) }

// DeleteRange records the deletion of every key in [start, end). An empty
// range (start == end) is a no-op, not recorded (RocksDB and Pebble take
// it so too); an end before the start makes the batch invalid (see Err).
func (b *Batch) DeleteRange(start, end []byte) { b.b.DeleteRange(start, end) }

// Count returns the number of operations.
func (b *Batch) Count() int { return b.b.Count() }

// Len returns the encoded size in bytes.
func (b *Batch) Len() int { return b.b.Len() }

// Empty reports whether the batch holds no operation.
func (b *Batch) Empty() bool { return b.b.Empty() }

// Err returns the first invalid operation recorded (a range whose end is
// before its start, a key too long); Apply refuses such a batch.
func (b *Batch) Err() error { return b.b.Err() }

// Reset empties the batch for reuse.
func (b *Batch) Reset() { b.b.Reset() }

// WriteOptions control one Apply.
type WriteOptions struct {
	// Sync makes Apply return only after the batch is durable on disk
	// (the WAL is fsynced; concurrent synced writes share one fsync).
	Sync bool
}

// Sync and NoSync are the two write options.
var (
	Sync   = &WriteOptions{Sync: true}
	NoSync = &WriteOptions{Sync: false}
)
