package cache

import "fmt"

// Kind says which kind of block an entry holds. It only selects the counters
// an operation is charged to (Metrics.Kinds); the cache treats every kind
// alike otherwise.
type Kind uint8

const (
	// KindData is a data block.
	KindData Kind = iota
	// KindIndex is an index partition or a single-level index block.
	KindIndex
	// KindFilter is a filter partition or a full (whole-table) filter.
	KindFilter
	// KindTopLevel is a top-level index or a top-level filter index.
	KindTopLevel
	// NumKinds is the number of kinds; it sizes Metrics.Kinds.
	NumKinds
)

// String returns the kind's name as metrics label it.
func (k Kind) String() string {
	switch k {
	case KindData:
		return "data"
	case KindIndex:
		return "index"
	case KindFilter:
		return "filter"
	case KindTopLevel:
		return "top-level"
	default:
		return fmt.Sprintf("kind(%d)", uint8(k))
	}
}

// counterIndex maps k to the slot of the per-kind counters. Lookup has no
// error result, so an out-of-range kind (a caller bug) is counted as data
// rather than indexing out of bounds.
func (k Kind) counterIndex() Kind {
	if k >= NumKinds {
		return KindData
	}
	return k
}

// Priority selects the LRU list an entry lives in within its shard.
type Priority uint8

const (
	// PriorityLow is for data blocks: they are evicted first.
	PriorityLow Priority = iota
	// PriorityHigh is for index and filter partitions: they live in the
	// shard's high-priority pool (up to Options.HighPriorityPoolRatio of
	// the shard) and are evicted only after every unreferenced low-priority
	// entry, so a scan of data blocks does not flush them.
	PriorityHigh
)

// String returns "low" or "high".
func (p Priority) String() string {
	switch p {
	case PriorityLow:
		return "low"
	case PriorityHigh:
		return "high"
	default:
		return fmt.Sprintf("priority(%d)", uint8(p))
	}
}
