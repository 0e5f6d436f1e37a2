// Package bookkeeper runs Apache BookKeeper's own storage classes beside
// this repository's code, as the judge of compatibility: a Maven module
// (pom.xml, src/main/java; BookKeeper 4.18.2's bookkeeper-server as a
// dependency, no upstream source copied) holds programs that write real
// bookie directories through BookKeeper's DbLedgerStorage and Journal,
// differential traces of its EntryLocationIndex and DbLedgerStorage, a
// reader of journal directories through BookKeeper's own Journal
// (ReadJournal: the journals this repository writes, read as upstream's
// readjournal command and replay read them), and the benchmark's
// BookKeeper arm (IndexBench: its EntryLocationIndex driven
// with the workload of docs/benchmarks.md; IndexBenchArm runs it as a
// benchmark.ProcessArm, on BookKeeper's rocksdbjni or on 10.10.1).
//
// The Go tests read what the programs write: the committed copies under
// testdata/ (testdata/README.md says how they were made) on every run, and
// fresh ones when java and mvn are on PATH (otherwise those tests skip,
// saying so). Compile builds the module once per process into a cache
// directory keyed by the sources' hash.
//
// The package serves tests and the bench/ module's BookKeeper arm; nothing
// else imports it, and the Go module never needs Java.
package bookkeeper
