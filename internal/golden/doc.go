// Package golden runs data-driven golden tests: text files of cases, each a
// command with its input and the output it is expected to produce, in the
// style of Pebble's testdata files. Persisted formats are pinned with them:
// a case encodes fixed input and prints the bytes as an annotated hex dump
// (Dump) whose fields are named, so that a change to a format constant, a
// flag bit or an encoding fails the test with a readable diff, and a
// deliberate change is reviewed as a diff of the testdata file.
//
// A testdata file is a sequence of cases:
//
//	# comment lines and blank lines between cases are kept as they are
//	command arg key=value key=(v1,v2)
//	input line
//	...
//	----
//	expected output line
//	...
//	<blank line or end of file>
//
// Run a test with -update to rewrite the expected outputs of its files from
// what the code produces now (then review the diff before committing).
//
// Committed fixture files (a version-1 table, WAL, MANIFEST, entry log) are
// written by their generators only with -regenerate: an ordinary run reads
// the committed bytes, so a reader change that breaks old files fails.
//
// The package defines the -update and -regenerate flags of every test binary
// that imports it, so such a package must not define them itself. Give them
// per package (go test ./lsm/internal/block -run Format -update): a package
// that does not import golden rejects them.
package golden
