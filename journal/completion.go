package journal

// A batch is the adds the journal writes with one write (and, with
// journalSyncData, makes durable with one fsync): they complete together.
type batch struct {
	// done is closed when the batch completes; err, fileID, base and end
	// are set before.
	done chan struct{}
	err  error
	// fileID is the file the batch went to; base the offset of its first
	// byte; end the offset after it and its padding.
	fileID    int64
	base, end int64
	// starts and forceStarts are the queueing times of the batch's adds
	// and ForceLedger requests (journalStats.since), for their latencies.
	starts, forceStarts []int64
}

// adds returns how many requests the batch holds.
func (b *batch) adds() int { return len(b.starts) + len(b.forceStarts) }

func newBatch() *batch { return &batch{done: make(chan struct{})} }

// complete records the batch's outcome and wakes its waiters.
func (b *batch) complete(err error) {
	b.err = err
	close(b.done)
}

// failedBatch is a completed batch with err.
func failedBatch(err error) *batch {
	b := newBatch()
	b.complete(err)
	return b
}

// Completion is the outcome of one add, which the caller can wait for
// (upstream's WriteCallback): Done is closed when the add is durable (with
// journalSyncData, after the fsync that covers it; without, once it is
// written to the operating system) or failed. It is a small value, to be
// copied; the adds of one batch share their state.
type Completion struct {
	b *batch
	// end is the record's end within its batch (for a request that
	// writes nothing, the end of the records queued before it).
	end int64
}

// Done is closed when the add completes.
func (c Completion) Done() <-chan struct{} { return c.b.done }

// Wait blocks until the add completes and returns Err.
func (c Completion) Wait() error {
	<-c.b.done
	return c.b.err
}

// Err returns nil while the add is pending or once it is durable, and why
// it failed otherwise. An add that failed was never reported durable; its
// record may still reappear at a replay (it was written but not synced),
// as an unacknowledged write may.
func (c Completion) Err() error {
	select {
	case <-c.b.done:
		return c.b.err
	default:
		return nil
	}
}

// Mark returns, once the add is durable, the log mark just past its record
// (for a request that writes nothing, such as ForceLedger, just past the
// records queued before it): a checkpoint covering this mark covers the
// add. The zero mark before, after a failure and for an entry not
// journaled (journalWriteData=false).
func (c Completion) Mark() LogMark {
	select {
	case <-c.b.done:
	default:
		return LogMark{}
	}
	if c.b.err != nil || c.b.fileID == 0 {
		return LogMark{}
	}
	return LogMark{FileID: c.b.fileID, Offset: c.b.base + c.end}
}
