//go:build !invariants

package base

const invariantsEnabled = false
