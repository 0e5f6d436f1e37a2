package base

// InternalIterator walks internal keys (user key ascending, trailer
// descending). Memtable, table, level and merging iterators implement it.
// Positioning methods return whether the iterator is at an entry; keys and
// values stay valid until the iterator moves. After Error returns non-nil
// the iterator is invalid. Next and Prev require a valid iterator.
type InternalIterator interface {
	// SeekGE moves to the first entry >= (userKey, trailer).
	SeekGE(userKey []byte, trailer Trailer) bool
	// SeekLT moves to the last entry < (userKey, trailer).
	SeekLT(userKey []byte, trailer Trailer) bool
	First() bool
	Last() bool
	Next() bool
	Prev() bool
	Valid() bool
	UserKey() []byte
	Trailer() Trailer
	Value() []byte
	Error() error
	// Close releases resources; it returns the iterator's error, if any.
	Close() error
}
