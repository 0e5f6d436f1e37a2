package memtable

import (
	"encoding/binary"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
)

// Node layout, as byte offsets from the node's start (see the package
// comment for the diagram). These are in-memory only and may change freely.
const (
	nodeTrailerOffset   = 0
	nodeKeySizeOffset   = 8
	nodeValueSizeOffset = 12
	nodeHeightOffset    = 16
	nodeTowerOffset     = 20
	towerSlotSize       = 4

	// maxHeight bounds the tower. With p = 1/4 a list needs about
	// log4(n) levels, so 20 levels serve 4^19 ≈ 2.7e11 entries, far more
	// than a 4 GiB arena can hold.
	maxHeight = 20
)

// nodeSize returns the bytes a node of the given height needs for its header
// and tower, before its key and value.
func nodeSize(height int) uint64 {
	return nodeTowerOffset + uint64(height)*towerSlotSize
}

// MaxEntrySize returns the most arena bytes one entry with a key of keyLen
// bytes and a value of valueLen bytes can take (a node of maximum height,
// rounded up to the arena alignment). A writer that wants a whole batch to
// land in one memtable can sum it over the batch and compare with
// Memtable.Available before applying.
func MaxEntrySize(keyLen, valueLen int) int {
	return int(alignUp(nodeSize(maxHeight) + uint64(max(keyLen, 0)) + uint64(max(valueLen, 0))))
}

// newNode allocates a node of the given height holding key, trailer and
// value; its tower slots are nil in a fresh arena and stale in a recycled
// one (Recycle), and the caller sets them. It returns false, allocating nothing,
// when the arena cannot hold it. The node is not yet reachable by readers.
func (a *arena) newNode(height int, key []byte, trailer base.Trailer, value []byte) (uint32, bool) {
	n := nodeSize(height) + uint64(len(key)) + uint64(len(value))
	nd, ok := a.alloc(n)
	if !ok {
		return 0, false
	}
	a.fillNode(nd, n, height, key, trailer, value)
	return nd, true
}

// newNodeAfter is newNode for a run of nodes allocated together
// (prepareSorted): it allocates at *end, the arena's use so far counting
// the run's earlier nodes, and advances *end, leaving the arena's own
// counter to be stored once for the whole run (an atomic store per node
// was a fifth of a sorted insert's CPU).
func (a *arena) newNodeAfter(end *uint64, height int, key []byte, trailer base.Trailer, value []byte) (uint32, bool) {
	n := nodeSize(height) + uint64(len(key)) + uint64(len(value))
	off := *end
	next := off + alignUp(n)
	if next > uint64(len(a.buf)) {
		return 0, false
	}
	*end = next
	a.fillNode(uint32(off), n, height, key, trailer, value)
	return uint32(off), true
}

// fillNode writes a node's header, key and value into its n bytes at nd.
func (a *arena) fillNode(nd uint32, n uint64, height int, key []byte, trailer base.Trailer, value []byte) {
	b := a.buf[nd : uint64(nd)+n]
	binary.LittleEndian.PutUint64(b[nodeTrailerOffset:], uint64(trailer))
	binary.LittleEndian.PutUint32(b[nodeKeySizeOffset:], uint32(len(key)))
	binary.LittleEndian.PutUint32(b[nodeValueSizeOffset:], uint32(len(value)))
	binary.LittleEndian.PutUint32(b[nodeHeightOffset:], uint32(height))
	// The tower slots are set by Add before the node is published (a
	// recycled arena holds old bytes there).
	keyStart := nodeSize(height)
	copy(b[keyStart:], key)
	copy(b[keyStart+uint64(len(key)):], value)
}

func (a *arena) nodeHeight(nd uint32) int {
	return int(binary.LittleEndian.Uint32(a.buf[nd+nodeHeightOffset:]))
}

func (a *arena) nodeTrailer(nd uint32) base.Trailer {
	return base.Trailer(binary.LittleEndian.Uint64(a.buf[nd+nodeTrailerOffset:]))
}

// nodeKey returns the node's user key as a slice of the arena whose capacity
// ends with the key, so an append by the caller cannot overwrite the value.
func (a *arena) nodeKey(nd uint32) []byte {
	keySize := binary.LittleEndian.Uint32(a.buf[nd+nodeKeySizeOffset:])
	start := nd + nodeTowerOffset + uint32(a.nodeHeight(nd))*towerSlotSize
	end := start + keySize
	return a.buf[start:end:end]
}

// nodeValue returns the node's value, capacity-limited like nodeKey.
func (a *arena) nodeValue(nd uint32) []byte {
	keySize := binary.LittleEndian.Uint32(a.buf[nd+nodeKeySizeOffset:])
	valueSize := binary.LittleEndian.Uint32(a.buf[nd+nodeValueSizeOffset:])
	start := nd + nodeTowerOffset + uint32(a.nodeHeight(nd))*towerSlotSize + keySize
	end := start + valueSize
	return a.buf[start:end:end]
}

// next returns the successor of nd at level, or 0 at the end of the level.
func (a *arena) next(nd uint32, level int) uint32 {
	return a.loadUint32(nd + nodeTowerOffset + uint32(level)*towerSlotSize)
}

// setNextUnpublished is setNext for a node no reader can reach yet: a
// plain store, made visible by the atomic store that later publishes it.
func (a *arena) setNextUnpublished(nd uint32, level int, succ uint32) {
	binary.LittleEndian.PutUint32(a.buf[nd+nodeTowerOffset+uint32(level)*towerSlotSize:], succ)
}

// setNext points nd's tower at level to succ. Storing into a published node
// is what makes succ visible to readers at that level.
func (a *arena) setNext(nd uint32, level int, succ uint32) {
	a.storeUint32(nd+nodeTowerOffset+uint32(level)*towerSlotSize, succ)
}
