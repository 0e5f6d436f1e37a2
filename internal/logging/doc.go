// Package logging builds the service's logger: the one *slog.Logger that
// cmd/bookie-index hands to the storage, the indexes, every engine and the
// admin API, so that all their lines reach one stream in one format.
//
// Three rules hold for every line, whoever logs it:
//
//   - One line per event. Both formats (text: slog's key=value; json: one
//     object per line) quote or escape newlines, so a message or a value
//     holding one still makes one line.
//   - Errors render as their message chain ("opening x: reading y: bad
//     checksum"). An error from github.com/cockroachdb/errors printed with
//     %+v carries stack traces, several KB each; slog's text handler
//     prints any value that way. The handler renders every error attribute
//     with Error() instead, and with %+v (stacks included) only at level
//     debug.
//   - A failure at one place of one file is logged once per interval
//     (default a minute) per message. An error that names a file and an
//     offset (it has a FileOffset() (string, int64) method somewhere in its
//     chain, as table block read errors do) is such a failure: a damaged
//     block read by every request logs its first line, then nothing for
//     the interval; the next line after it carries suppressed=N, the
//     repeats it did not log. See repeats.go.
package logging
