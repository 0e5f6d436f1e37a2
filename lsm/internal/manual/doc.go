// Package manual allocates the block cache's memory outside the Go heap:
// buffers that the garbage collector never scans, never waits for and never
// counts towards its heap goal, returned to the allocator explicitly.
//
// # Why
//
// Blocks held in garbage-collected slices stay resident after eviction
// until a collection finds them unreachable, and with GOGC=100 the
// collector lets the heap grow to about twice what is live, so a full
// 1 GiB block cache made the process 2.3 GiB resident. A cache whose
// blocks live here is as large as its capacity says; the Go heap holds only
// what the rest of the program uses, and a collection is triggered by that.
//
// # Structure
//
// Memory comes in arenas: anonymous private mappings (syscall.Mmap on
// Linux; a plain byte slice elsewhere, which the collector does not scan
// either since it holds no pointers) of a size fixed per allocator. An
// arena is carved into runs of whole units (1 KiB), each run either in use
// or free. Free runs sit on doubly linked lists by length (one list per
// length up to maxListed units, one for longer runs), linked through side
// arrays indexed by unit, so that nothing is written into free memory.
// Alloc takes the shortest free run that fits (best fit: a bitmap of the
// non-empty lists finds it in a few word scans) and splits off the rest;
// Free merges the run with free neighbours (boundary tags at both ends of
// every run) before listing it. A request larger than a quarter of an
// arena gets a mapping of its own, unmapped on Free.
//
// Pages of an arena become resident when first written and stay so while
// the arena is mapped; an arena that becomes entirely free is unmapped
// unless it is the only empty one (kept to absorb the next burst).
// MappedBytes less InUseBytes is what the allocator holds that nobody uses:
// rounding to units and free runs too short for the next request.
//
// # Ownership
//
// Every Buf from Alloc must be passed to Free exactly once, and nothing may
// touch its bytes afterwards: the memory goes to the next Alloc. The block
// cache (package cache) owns the buffers of its entries and frees one when
// the entry has left the cache and its last handle is released.
//
// # Checks
//
// Built with -tags invariants, the allocator makes misuse fail loudly: the
// unit is the page size, freed memory is filled with poisonByte and (on
// Linux) protected with PROT_NONE so that a stale read faults, freed runs
// wait in a quarantine before they can be reused, a Buf freed twice (or one
// the allocator never made) panics, and Close reports buffers still in use
// (leaks). Without the tag a double free of a run not reallocated since
// also panics; the other checks are compiled out.
package manual
