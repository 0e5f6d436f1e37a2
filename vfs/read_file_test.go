package vfs

import (
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadFile: a file up to the limit reads whole; a larger one, a missing
// one and a failed read are errors that say which.
func TestReadFile(t *testing.T) {
	fs := NewMem()
	writeFile(t, fs, "f", "abcd", true)
	writeFile(t, fs, "empty", "", true)

	data, err := ReadFile(fs, "f", 4)
	require.NoError(t, err)
	require.Equal(t, "abcd", string(data))
	data, err = ReadFile(fs, "empty", 0)
	require.NoError(t, err)
	require.Empty(t, data)

	_, err = ReadFile(fs, "f", 3)
	require.ErrorIs(t, err, ErrFileTooLarge)
	var tooLarge *FileTooLargeError
	require.ErrorAs(t, err, &tooLarge)
	require.Equal(t, FileTooLargeError{Path: "f", Size: 4, Limit: 3}, *tooLarge)
	require.EqualError(t, err, "f holds 4 bytes, more than 3")

	_, err = ReadFile(fs, "missing", 4)
	require.ErrorIs(t, err, os.ErrNotExist)

	_, err = ReadFile(NewErrorFS(fs, OnOp(OpRead, "f")), "f", 4)
	require.ErrorIs(t, err, ErrInjected)
	require.ErrorContains(t, err, "reading f")
	_, err = ReadFile(NewErrorFS(fs, OnOp(OpSize, "f")), "f", 4)
	require.ErrorIs(t, err, ErrInjected)

	// A file that shrank between its size and the read.
	_, err = ReadFile(shrunkFS{fs}, "f", 5)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
}

// shrunkFS opens files whose Size claims one byte more than they hold.
type shrunkFS struct{ FS }

func (s shrunkFS) Open(name string) (File, error) {
	f, err := s.FS.Open(name)
	if err != nil {
		return nil, err
	}
	return shrunkFile{f}, nil
}

type shrunkFile struct{ File }

func (f shrunkFile) Size() (int64, error) {
	n, err := f.File.Size()
	return n + 1, err
}
