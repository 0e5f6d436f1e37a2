package conf

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLogKeys(t *testing.T) {
	c, err := Load(LoadOptions{Overrides: map[string]string{"logLevel": "debug", "logFormat": "json"}})
	require.NoError(t, err)
	require.Equal(t, "debug", c.LogLevel)
	require.Equal(t, "json", c.LogFormat)

	c, err = Load(LoadOptions{})
	require.NoError(t, err)
	require.Equal(t, "", c.LogLevel, "empty: the command's default")
	require.Equal(t, "text", c.LogFormat)

	_, err = Load(LoadOptions{Overrides: map[string]string{"logLevel": "verbose"}})
	require.ErrorContains(t, err, `logLevel: "verbose" is not accepted (accepted: debug, info, warn, error)`)
	_, err = Load(LoadOptions{Path: writeFile(t, "bk_server.conf", "logFormat=xml\n")})
	require.ErrorContains(t, err, `logFormat: "xml" is not accepted (accepted: text, json)`)
}
