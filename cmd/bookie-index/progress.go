package main

import (
	"bytes"
	"io"
	"os"
	"sync"
	"time"
)

// Progress output: on a terminal a status line is redrawn in place ("\r"
// and the erase-line escape); into a pipe or a file those codes would be
// garbage, so there every status line is a plain line, and only one every
// interval (the last status before a full line is dropped, not delayed).

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progressOutput returns w itself on a terminal, otherwise a writer that
// turns the redrawn status lines written to it into plain lines, at most
// one per every.
func progressOutput(w io.Writer, every time.Duration) io.Writer {
	if isTerminal(w) {
		return w
	}
	return &plainProgress{w: w, every: every}
}

// plainProgress rewrites status lines for a pipe. Each Write is one status
// update ("\r" text "\x1b[K"), one erase ("\r\x1b[K") or ordinary text.
type plainProgress struct {
	w     io.Writer
	every time.Duration

	mu   sync.Mutex
	last time.Time
}

var (
	carriageReturn = []byte("\r")
	eraseLine      = []byte("\x1b[K")
)

func (p *plainProgress) Write(b []byte) (int, error) {
	status := bytes.HasPrefix(b, carriageReturn) || bytes.Contains(b, eraseLine)
	if !status {
		return p.w.Write(b)
	}
	text := bytes.ReplaceAll(bytes.ReplaceAll(b, eraseLine, nil), carriageReturn, nil)
	if len(bytes.TrimSpace(text)) == 0 {
		return len(b), nil // an erase
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if now := time.Now(); p.last.IsZero() || now.Sub(p.last) >= p.every {
		p.last = now
		if !bytes.HasSuffix(text, []byte("\n")) {
			text = append(text, '\n')
		}
		if _, err := p.w.Write(text); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}
