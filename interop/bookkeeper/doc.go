// Package bookkeeper runs Apache BookKeeper's own storage classes beside
// this repository's code, as the judge of compatibility: a Maven module
// (pom.xml, src/main/java; BookKeeper 4.18.2's bookkeeper-server as a
// dependency, no upstream source copied) holds programs that write real
// bookie directories through BookKeeper's DbLedgerStorage and Journal, and
// differential traces of its EntryLocationIndex and DbLedgerStorage.
//
// The Go tests read what the programs write: the committed copies under
// testdata/ (testdata/README.md says how they were made) on every run, and
// fresh ones when java and mvn are on PATH (otherwise those tests skip,
// saying so). Build compiles the module once per test process into a
// cache directory keyed by the sources' hash.
//
// The package is for tests only; nothing else in the repository imports
// it, and the Go module never needs Java.
package bookkeeper
