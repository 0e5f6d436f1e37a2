// Package wal writes the write-ahead log: every batch the DB applies is
// appended here, framed by the record package, before it reaches the
// memtable, and a synced append returns only once the batch is durable.
//
// # Group commit
//
// Writer.Append is called by many goroutines at once. Each call encodes its
// record into a shared pending buffer under the Writer's mutex, so records
// reach the file in the order the calls took the mutex. No goroutine is
// dedicated to I/O: a caller whose record is not yet written becomes the
// writer (if nobody is) and hands the whole pending buffer, its own record
// and everyone else's, to File.Write in one call; a caller that needs its
// record durable becomes the syncer (if nobody is) and issues one File.Sync
// that covers every record whose Write finished before the Sync started.
// The others wait on a condition variable. While one Sync runs, new records
// pile up, and the next Sync covers them all: under load, N concurrent synced
// appends cost far fewer than N Syncs.
//
//	appenders:  A1 A2 A3 ...            A4 A5 A6 ...
//	                 \  |  /                 \  |  /
//	file:        Write(A1..A3)  Sync ---->  Write(A4..A6)  Sync ---->
//	                            A1..A3 done                A4..A6 done
//
// One Write and one Sync may be in flight at the same time (on different
// goroutines), so a synced append does not hold back an unsynced one that
// only needs its Write. vfs.File implementations must allow that; the OS
// file and the in-memory file do.
//
// # Synced-length marks
//
// With Options.SyncedLength, the goroutine that issued a successful Sync
// appends the log length that Sync covered to the log's synced-length file
// (package record's SyncedLengthWriter), still before any record it covered
// is reported durable. The mark is one small write, not synced: it survives
// a process crash, so after a crash every acknowledged record lies below
// the last mark, and recovery can call damage there corruption rather than
// a torn tail. A failed mark breaks the Writer like a failed Sync.
//
// # Failures
//
// A failed Write or Sync breaks the Writer for good: that call, every caller
// waiting on it and every later call return an error wrapping the first
// failure. A record is never reported durable unless a Sync that started
// after its Write returned succeeded. After a failed fsync the kernel may
// have dropped the dirty pages, so retrying the Sync could falsely report
// success; the DB must stop writing to this log instead (LevelDB, Pebble and
// PostgreSQL made the same choice after the 2018 "fsyncgate" reports).
//
// # Thread safety
//
// All methods of Writer are safe for concurrent use.
package wal
