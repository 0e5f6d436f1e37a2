package vfs

import (
	stderrors "errors"
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

type markedNoSpace struct{ cause error }

func (e markedNoSpace) Error() string        { return "refused: " + e.cause.Error() }
func (e markedNoSpace) Unwrap() error        { return e.cause }
func (e markedNoSpace) Is(target error) bool { return target == ErrNoSpace }

func TestIsNoSpace(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{syscall.ENOSPC, true},
		{syscall.EDQUOT, true},
		{&os.PathError{Op: "write", Path: "f", Err: syscall.ENOSPC}, true},
		{errors.Wrap(&os.PathError{Op: "write", Path: "f", Err: syscall.EDQUOT}, "context"), true},
		{fmt.Errorf("context: %w", ErrNoSpace), true},
		{markedNoSpace{stderrors.New("retrying")}, true},
		{syscall.EIO, false},
		{errors.Wrap(ErrInjected, "context"), false},
		{errors.New("out of space"), false}, // the text alone is not the error
	} {
		require.Equal(t, c.want, IsNoSpace(c.err), "%v", c.err)
	}
}
