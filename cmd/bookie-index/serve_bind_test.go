package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestServeRefusesUnauthenticatedNetworkBind: bound to an address that is
// not loopback, serve needs a token file or the explicit opt-out, and
// refuses before it opens (or creates) any directory.
func TestServeRefusesUnauthenticatedNetworkBind(t *testing.T) {
	s := newServeSetup(t)
	for _, host := range []string{"0.0.0.0", "::", "192.0.2.1"} {
		code, _, errOut := runCmd("serve", "--conf", s.confPath, "--set", "httpServerAuthTokenFile=", "--set", "httpServerHost="+host)
		require.Equal(t, 1, code, host)
		require.Contains(t, errOut, "httpServerHost="+host+" is not a loopback address", host)
		require.Contains(t, errOut, "httpServerAuthTokenFile", host)
		require.Contains(t, errOut, "httpServerAllowUnauthenticated=true", host)
	}
	_, err := os.Stat(filepath.Join(s.root, "l1"))
	require.ErrorIs(t, err, os.ErrNotExist, "a refused serve created no directory")

	// An empty token file is a start-up error, as an unreadable one.
	empty := filepath.Join(s.root, "empty-token")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	code, _, errOut := runCmd("serve", "--conf", s.confPath, "--set", "httpServerAuthTokenFile="+empty)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "holds no token")
	code, _, errOut = runCmd("serve", "--conf", s.confPath, "--set", "httpServerAuthTokenFile="+filepath.Join(s.root, "missing-token"))
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "httpServerAuthTokenFile: reading")

	// A token, or the opt-out, or loopback: it starts.
	for _, sets := range [][]string{
		{"httpServerHost=0.0.0.0"},
		{"httpServerHost=0.0.0.0", "httpServerAuthTokenFile=", "httpServerAllowUnauthenticated=true"},
		{"httpServerHost=localhost", "httpServerAuthTokenFile="},
		{"httpServerEnabled=false", "httpServerHost=0.0.0.0", "httpServerAuthTokenFile="},
	} {
		args := []string{"--conf", s.confPath}
		for _, kv := range sets {
			args = append(args, "--set", kv)
		}
		ctx, cancel := context.WithCancel(context.Background())
		var stderr syncBuffer
		ready := make(chan struct{})
		done := make(chan error, 1)
		go func() { done <- serve(ctx, nil, args, &stderr, func(string) { close(ready) }) }()
		select {
		case <-ready:
		case err := <-done:
			t.Fatalf("%v: serve returned %v\n%s", sets, err, stderr.String())
		}
		cancel()
		require.NoError(t, <-done, "%v", sets)
		if sets[len(sets)-1] == "httpServerAllowUnauthenticated=true" {
			require.Contains(t, stderr.String(), "PUT and DELETE need no token")
		}
	}
}

func TestIsLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1": true, "127.1.2.3": true, "::1": true, "localhost": true, "LocalHost": true,
		"0.0.0.0": false, "::": false, "10.1.2.3": false, "2001:db8::1": false,
	} {
		got, err := isLoopbackHost(context.Background(), host)
		require.NoError(t, err, host)
		require.Equal(t, want, got, host)
	}
}
