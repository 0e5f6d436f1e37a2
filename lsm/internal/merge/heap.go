package merge

import "github.com/bookie-index/bookie-index/lsm/internal/base"

// item is a child iterator that is at an entry, with that entry's key
// cached so that heap comparisons need no interface calls.
type item struct {
	userKey []byte
	trailer base.Trailer
	// index is the child's position in Iter.children, the tie-break.
	index int
}

// heap is a binary heap of items: a min-heap in merged order when moving
// forward, a max-heap when reverse. It is written out rather than built on
// container/heap so that comparisons and swaps are direct calls on concrete
// types, not calls through heap.Interface.
type heap struct {
	items   []item
	reverse bool
}

// before reports whether a comes out of the heap before b: a is earlier in
// merged order (internal key, then child index) when moving forward, later
// when moving backward.
func (h *heap) before(a, b *item) bool {
	c := base.CompareInternal(a.userKey, a.trailer, b.userKey, b.trailer)
	if c == 0 {
		c = a.index - b.index
	}
	if h.reverse {
		return c > 0
	}
	return c < 0
}

// init establishes the heap order over items in any order, O(n).
func (h *heap) init() {
	for i := len(h.items)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

// down moves items[i] toward the leaves until neither child comes out
// before it.
func (h *heap) down(i int) {
	items := h.items
	n := len(items)
	for {
		first := 2*i + 1
		if first >= n {
			return
		}
		if second := first + 1; second < n && h.before(&items[second], &items[first]) {
			first = second
		}
		if !h.before(&items[first], &items[i]) {
			return
		}
		items[i], items[first] = items[first], items[i]
		i = first
	}
}

// popTop removes the top item.
func (h *heap) popTop() {
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items[last] = item{} // drop the key reference
	h.items = h.items[:last]
	if last > 0 {
		h.down(0)
	}
}
