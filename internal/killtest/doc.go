// Package killtest runs the kill tests' child processes: a test binary
// re-executes itself to run one child test, which writes durably and prints
// "ACK n" for each write it has made durable; the parent SIGKILLs it and
// checks what survived.
//
// A round fails the test, instead of passing vacuously, when the child ends
// by itself (it writes until killed, so any exit is an error) or makes no
// progress (acknowledges nothing within a bound). Seed logs a kill test's
// seed, so that a failing run can be replayed.
package killtest
