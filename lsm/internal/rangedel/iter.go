package rangedel

// Iter walks a set's fragments in either direction. Positioning methods
// return the fragment the iterator lands on, or nil when it moves off either
// end. The returned fragment points into the set and must not be modified.
//
// The iterator's position runs from "before the first fragment" to "after
// the last": Next from before the first lands on the first fragment and Prev
// from after the last lands on the last, as if the ends were sentinels. A
// new or re-initialized iterator is before the first fragment. An Iter is
// not safe for concurrent use, but any number of iterators may share a set.
type Iter struct {
	frags []Fragment
	// pos is the current fragment's index: -1 before the first fragment,
	// len(frags) after the last.
	pos int
}

// NewIter returns an iterator over the set's fragments.
func (s *Set) NewIter() *Iter {
	it := &Iter{}
	it.Init(s)
	return it
}

// Init resets it to iterate over s (nil is an empty set), positioned before
// the first fragment. It lets callers embed an Iter by value and avoid an
// allocation per lookup.
func (it *Iter) Init(s *Set) {
	*it = Iter{frags: s.Fragments(), pos: -1}
}

// Len returns the number of fragments the iterator walks.
func (it *Iter) Len() int { return len(it.frags) }

// Current returns the fragment at the iterator's position, or nil when the
// iterator is before the first or after the last fragment.
func (it *Iter) Current() *Fragment {
	if it.pos < 0 || it.pos >= len(it.frags) {
		return nil
	}
	return &it.frags[it.pos]
}

// SeekGE moves to the fragment containing userKey or, if none contains it,
// the first fragment after userKey.
func (it *Iter) SeekGE(userKey []byte) *Fragment {
	it.pos = searchEndAbove(it.frags, userKey)
	return it.Current()
}

// SeekLT moves to the last fragment that starts below userKey: the fragment
// containing the keys just below userKey if there is one, else the last
// fragment before them.
func (it *Iter) SeekLT(userKey []byte) *Fragment {
	it.pos = searchStartBelow(it.frags, userKey)
	return it.Current()
}

// First moves to the first fragment.
func (it *Iter) First() *Fragment {
	it.pos = 0
	return it.Current()
}

// Last moves to the last fragment.
func (it *Iter) Last() *Fragment {
	it.pos = len(it.frags) - 1
	return it.Current()
}

// Next moves to the following fragment. After the last fragment the
// iterator stays after it and Next keeps returning nil.
func (it *Iter) Next() *Fragment {
	if it.pos < len(it.frags) {
		it.pos++
	}
	return it.Current()
}

// Prev moves to the preceding fragment. Before the first fragment the
// iterator stays before it and Prev keeps returning nil.
func (it *Iter) Prev() *Fragment {
	if it.pos >= 0 {
		it.pos--
	}
	return it.Current()
}
