package main

import (
	"encoding/hex"
	"fmt"
	"strings"
)

// Keys on the command line and in the tools' output: an entry location
// key (16 bytes, BookKeeper's BE64 ledger ‖ BE64 entry) is LEDGER:ENTRY,
// any key may be given in hex (with or without 0x), and --hex prints
// every key in hex.

// parseKey parses KEY: LEDGER:ENTRY or a hex key.
func parseKey(what, s string) ([]byte, error) {
	if k, ok := parseHexKey(s); ok {
		return k, nil
	}
	l, e, ok := strings.Cut(s, ":")
	if !ok {
		return nil, usageErrorf("%s %q is neither LEDGER:ENTRY nor a key in hex", what, s)
	}
	ledger, err := parseID(what+" ledger", l)
	if err != nil {
		return nil, err
	}
	entry, err := parseID(what+" entry", e)
	if err != nil {
		return nil, err
	}
	return encodeKey(ledger, entry), nil
}

// parseHexKey parses a key in hex: 0x followed by any even number of
// digits, or 32 digits (an entry location key; shorter digit strings read
// as ledger ids).
func parseHexKey(s string) ([]byte, bool) {
	digits, prefixed := strings.CutPrefix(strings.ToLower(s), "0x")
	if !prefixed && len(digits) != 32 {
		return nil, false
	}
	k, err := hex.DecodeString(digits)
	if err != nil || len(k) == 0 {
		return nil, false
	}
	return k, true
}

// describeKey names a key in messages: "entry E of ledger L" or its hex.
func describeKey(k []byte) string {
	if len(k) == 16 {
		return fmt.Sprintf("entry %s", formatKeyAsEntry(k))
	}
	return "key " + hex.EncodeToString(k)
}

func formatKeyAsEntry(k []byte) string {
	l, e, _ := strings.Cut(formatKey(k), ":")
	return e + " of ledger " + l
}

// formatKeyIn prints a key as LEDGER:ENTRY (other keys quoted) or in hex.
func formatKeyIn(k []byte, asHex bool) string {
	if asHex {
		return hex.EncodeToString(k)
	}
	return formatKey(k)
}
