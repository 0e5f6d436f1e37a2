package journal

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestResolvedZeroDefaultNegativeNone: MaxGroupWait and MaxBackupJournals
// take their default at 0, none (0) when negative, and a positive value
// as it is.
func TestResolvedZeroDefaultNegativeNone(t *testing.T) {
	base := Options{JournalDirectories: []string{"/j"}, LedgerDirectories: []string{"/l"}}
	for _, tc := range []struct {
		wait       time.Duration
		backups    int
		wantWait   time.Duration
		wantBackup int
	}{
		{0, 0, DefaultMaxGroupWait, DefaultMaxBackupJournals},
		{-1, -3, 0, 0},
		{7 * time.Millisecond, 2, 7 * time.Millisecond, 2},
	} {
		o := base
		o.MaxGroupWait, o.MaxBackupJournals = tc.wait, tc.backups
		r, err := o.resolved()
		require.NoError(t, err)
		require.Equal(t, tc.wantWait, r.MaxGroupWait)
		require.Equal(t, tc.wantBackup, r.MaxBackupJournals)
	}
}
