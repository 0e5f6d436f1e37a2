// Package base holds the vocabulary every other lsm package shares: internal
// keys (user key + sequence number + kind), the error marks (corruption, not
// found, closed) and the invariants switch for expensive self-checks.
//
// It imports nothing of ours but vfs (whose ErrNoSpace is its ErrNoSpace),
// so every internal package may import it.
package base
