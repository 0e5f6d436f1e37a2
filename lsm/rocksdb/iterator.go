package rocksdb

import "bytes"

// Iter walks the keys a RocksDB reader would see at the newest sequence
// number: for each user key its newest version, unless that version is a
// deletion or a range deletion newer than it covers the key.
type Iter struct {
	db    *DB
	m     *mergingIter
	key   []byte
	value []byte
	valid bool
}

// First positions the iterator at the first visible key.
func (it *Iter) First() {
	it.m.First()
	it.settle()
}

// SeekGE positions the iterator at the first visible key >= key.
func (it *Iter) SeekGE(key []byte) {
	it.m.SeekGE(key)
	it.settle()
}

// Next moves to the next visible key.
func (it *Iter) Next() {
	if !it.valid {
		return
	}
	it.skipVersions(it.key)
	it.settle()
}

// Valid reports whether the iterator is at a key; after the last one or an
// error it is not (check Err).
func (it *Iter) Valid() bool { return it.valid }

// Key returns the current key, valid until the iterator moves.
func (it *Iter) Key() []byte { return it.key }

// Value returns the current value, valid until the iterator moves.
func (it *Iter) Value() []byte { return it.value }

// Err returns the error that stopped the iterator, if any.
func (it *Iter) Err() error { return it.m.Err() }

// Close releases the iterator and returns its error, if any. The iterator
// holds no files (the DB does), so Close is optional.
func (it *Iter) Close() error {
	err := it.Err()
	it.valid, it.key, it.value = false, nil, nil
	return err
}

// settle moves the merged iterator, which is at the newest version of some
// user key, to the first user key whose newest version is visible.
func (it *Iter) settle() {
	for it.m.Valid() {
		k := it.m.Key()
		if k.kind == typeValue && it.db.rangeDels.maxSeq(k.user) <= k.seq {
			it.key = append(it.key[:0], k.user...)
			it.value = append(it.value[:0], it.m.Value()...)
			it.valid = true
			return
		}
		it.key = append(it.key[:0], k.user...)
		it.skipVersions(it.key)
	}
	it.valid = false
}

// skipVersions moves the merged iterator past every version of user.
func (it *Iter) skipVersions(user []byte) {
	for it.m.Valid() && bytes.Equal(it.m.Key().user, user) {
		it.m.Next()
	}
}
