package bookie

import "github.com/cockroachdb/errors"

// ForceGC asks every directory for a forced garbage-collection cycle and
// returns at once (upstream's LedgerStorage.forceGC).
func (s *Storage) ForceGC(forceMajor, forceMinor bool) {
	for _, d := range s.dirs {
		d.ForceGC(forceMajor, forceMinor)
	}
}

// IsInForceGC reports whether a forced cycle is pending or running in
// any directory (upstream's isInForceGC).
func (s *Storage) IsInForceGC() bool {
	for _, d := range s.dirs {
		if d.GCStatus().ForceCompacting {
			return true
		}
	}
	return false
}

// SuspendMajorGC, SuspendMinorGC, ResumeMajorGC and ResumeMinorGC apply
// to every directory.
func (s *Storage) SuspendMajorGC() { s.each((*DirStorage).SuspendMajorGC) }
func (s *Storage) SuspendMinorGC() { s.each((*DirStorage).SuspendMinorGC) }
func (s *Storage) ResumeMajorGC()  { s.each((*DirStorage).ResumeMajorGC) }
func (s *Storage) ResumeMinorGC()  { s.each((*DirStorage).ResumeMinorGC) }

// IsMajorGCSuspended and IsMinorGCSuspended report whether every
// directory has that kind suspended.
func (s *Storage) IsMajorGCSuspended() bool {
	return s.all(func(st GCStatus) bool { return st.MajorSuspended })
}
func (s *Storage) IsMinorGCSuspended() bool {
	return s.all(func(st GCStatus) bool { return st.MinorSuspended })
}

// RunGC runs one cycle in every directory and waits for them; it returns
// their results in configuration order and the first error after trying
// them all.
func (s *Storage) RunGC(req GCRequest) ([]GCResult, error) {
	res := make([]GCResult, len(s.dirs))
	var errs error
	for i, d := range s.dirs {
		r, err := d.RunGC(req)
		res[i] = r
		errs = errors.CombineErrors(errs, err)
	}
	return res, errs
}

func (s *Storage) each(fn func(*DirStorage)) {
	for _, d := range s.dirs {
		fn(d)
	}
}

func (s *Storage) all(pred func(GCStatus) bool) bool {
	for _, d := range s.dirs {
		if !pred(d.GCStatus()) {
			return false
		}
	}
	return len(s.dirs) > 0
}

// GCStatuses returns each directory's garbage-collector status, in
// configuration order.
func (s *Storage) GCStatuses() []GCStatus {
	st := make([]GCStatus, len(s.dirs))
	for i, d := range s.dirs {
		st[i] = d.GCStatus()
	}
	return st
}

// GCMetrics returns each directory's garbage-collector statistics, in
// configuration order.
func (s *Storage) GCMetrics() []GCMetrics {
	m := make([]GCMetrics, len(s.dirs))
	for i, d := range s.dirs {
		m[i] = d.GCMetrics()
	}
	return m
}
