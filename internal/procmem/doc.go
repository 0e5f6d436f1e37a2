// Package procmem reads the process's memory as the kernel and the Go
// runtime count it: the resident set and its high-water mark (Linux's
// /proc/self; elsewhere they read as 0), and the memory the runtime holds
// from the system. The admin API's memory metrics and the benchmark's
// memory columns read the same numbers through it.
package procmem
