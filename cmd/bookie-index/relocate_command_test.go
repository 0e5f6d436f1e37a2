package main

import (
	"testing"

	"github.com/bookie-index/bookie-index/conf"
	"github.com/stretchr/testify/require"
)

// TestRelocateCommand: the refusal of moved directories names relocate
// with the file the start read, quoted for a shell, or with the
// directories themselves when they came from --set on the embedded file.
func TestRelocateCommand(t *testing.T) {
	require.Equal(t, "bookie-index relocate --conf /etc/bookkeeper/bk_server.conf",
		relocateCommand(&conf.Config{Source: "/etc/bookkeeper/bk_server.conf"}))
	require.Equal(t, `bookie-index relocate --conf '/srv/my conf/it'\''s.conf'`,
		relocateCommand(&conf.Config{Source: "/srv/my conf/it's.conf"}))
	require.Equal(t, "bookie-index relocate --set ledgerDirectories=/new/l1,/new/l2",
		relocateCommand(&conf.Config{Source: conf.EmbeddedServerConfName,
			LedgerDirectories: []string{"/new/l1", "/new/l2"}, IndexDirectories: []string{"/new/l1", "/new/l2"}}))
	require.Equal(t, "bookie-index relocate --set ledgerDirectories=/new/l1 --set indexDirectories=/new/i1",
		relocateCommand(&conf.Config{Source: conf.EmbeddedServerConfName,
			LedgerDirectories: []string{"/new/l1"}, IndexDirectories: []string{"/new/i1"}}))
}

// TestWithCommand: an error that starts with the command's name is not
// prefixed with it again.
func TestWithCommand(t *testing.T) {
	require.Equal(t, "relocate: /l1/current has no LAYOUT", withCommand("relocate", "relocate: /l1/current has no LAYOUT"))
	require.Equal(t, "check: 1 of 2 directories could not be checked", withCommand("check", "1 of 2 directories could not be checked"))
	require.Equal(t, "gc: relocated", withCommand("gc", "relocated"))
}
