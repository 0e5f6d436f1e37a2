package logging

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/cockroachdb/errors"
)

// located is what an error that names the bytes its failure concerns
// implements (somewhere in its chain): the file and the offset in it
// (-1: the file as a whole). Table block read errors do.
type located interface {
	FileOffset() (file string, offset int64)
}

// maxRepeatKeys bounds the places the limiter remembers. Beyond it, a new
// place is logged without being remembered (its repeats are not held back)
// until entries expire: memory stays bounded whatever fails.
const maxRepeatKeys = 1024

// repeatKey is one kind of line about one place.
type repeatKey struct {
	msg    string
	file   string
	offset int64
}

// repeatEntry is a place's state: when its last line was written and how
// many lines were dropped since.
type repeatEntry struct {
	logged     time.Time
	suppressed int
}

// repeatState is shared by a handler and the handlers derived from it
// (WithAttrs, WithGroup): they write to the same stream.
type repeatState struct {
	every time.Duration
	now   func() time.Time

	mu     sync.Mutex
	places map[repeatKey]*repeatEntry
}

// repeatHandler passes records to next, except repeats: a record whose
// error attribute names a file offset is dropped if a record with the same
// message about the same offset was written less than every ago. The
// first record written after that carries suppressed=N (the records
// dropped meanwhile). A place seen once and never again keeps its count
// until its entry is dropped to make room (past maxRepeatKeys).
type repeatHandler struct {
	next  slog.Handler
	state *repeatState
}

func newRepeatHandler(next slog.Handler, every time.Duration, now func() time.Time) *repeatHandler {
	return &repeatHandler{next: next, state: &repeatState{every: every, now: now, places: map[repeatKey]*repeatEntry{}}}
}

func (h *repeatHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

func (h *repeatHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &repeatHandler{next: h.next.WithAttrs(attrs), state: h.state}
}

func (h *repeatHandler) WithGroup(name string) slog.Handler {
	return &repeatHandler{next: h.next.WithGroup(name), state: h.state}
}

func (h *repeatHandler) Handle(ctx context.Context, r slog.Record) error {
	file, offset, ok := recordPlace(r)
	if !ok {
		return h.next.Handle(ctx, r)
	}
	suppressed, write := h.state.admit(repeatKey{msg: r.Message, file: file, offset: offset})
	if !write {
		return nil
	}
	if suppressed > 0 {
		r = r.Clone()
		r.AddAttrs(slog.Int("suppressed", suppressed))
	}
	return h.next.Handle(ctx, r)
}

// admit decides whether a line about k is written, and returns the lines
// about k dropped since the last one written.
func (s *repeatState) admit(k repeatKey) (suppressed int, write bool) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.places[k]
	if ok {
		if now.Sub(e.logged) < s.every {
			e.suppressed++
			return 0, false
		}
		suppressed = e.suppressed
		e.logged, e.suppressed = now, 0
		return suppressed, true
	}
	if len(s.places) >= maxRepeatKeys {
		s.expire(now)
	}
	if len(s.places) < maxRepeatKeys {
		s.places[k] = &repeatEntry{logged: now}
	}
	return 0, true
}

// expire drops the places whose last line is older than the interval.
// Their next line would be written anyway; only counts of repeats not
// followed by a later line are lost.
func (s *repeatState) expire(now time.Time) {
	for k, e := range s.places {
		if now.Sub(e.logged) >= s.every {
			delete(s.places, k)
		}
	}
}

// recordPlace returns the file offset named by the first error attribute
// of r that names one.
func recordPlace(r slog.Record) (file string, offset int64, ok bool) {
	r.Attrs(func(a slog.Attr) bool {
		v := a.Value.Resolve()
		if v.Kind() != slog.KindAny {
			return true
		}
		err, isErr := v.Any().(error)
		if !isErr || err == nil {
			return true
		}
		var l located
		if errors.As(err, &l) {
			file, offset = l.FileOffset()
			ok = true
			return false
		}
		return true
	})
	return file, offset, ok
}
