package conf

import (
	_ "embed"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/cockroachdb/errors"
	"github.com/spf13/viper"
)

// embeddedServerConf is the shipped bk_server.conf: every key Load honours,
// at its default. Load reads it when no file is given.
//
//go:embed bk_server.conf
var embeddedServerConf []byte

// EmbeddedServerConfName is the Source of a configuration loaded from the
// embedded bk_server.conf.
const EmbeddedServerConfName = "embedded bk_server.conf"

// EnvPrefix starts the environment variables Load reads: BK_<key>, with the
// key spelled exactly as in bk_server.conf (BK_httpServerPort=9090), as
// BookKeeper's Docker images do.
const EnvPrefix = "BK_"

// EmbeddedServerConf returns a copy of the embedded bk_server.conf, for
// operators who want a file to start from.
func EmbeddedServerConf() []byte { return append([]byte(nil), embeddedServerConf...) }

// LoadOptions say where Load reads the configuration from. Sources, from
// lowest to highest precedence: the defaults, the file (Path, or the
// embedded bk_server.conf), the environment, Overrides.
type LoadOptions struct {
	// Path is the bk_server.conf to read. Empty: the embedded one. A file
	// replaces the embedded one; keys it does not set keep their defaults,
	// which are the embedded file's values.
	Path string
	// Environment makes the process environment's BK_<key> variables
	// override the file (viper's environment layer, which reads the
	// process environment). False reads none.
	Environment bool
	// Overrides are key=value settings (--set flags) that override
	// everything else.
	Overrides map[string]string
}

// Load reads, merges, decodes and validates the configuration.
//
// Keys are BookKeeper's and case-sensitive. A key bookie-index does not use
// is ignored in the file and in the environment (bk_server.conf is shared
// with the rest of the bookie), but an override naming no key is an error;
// so is a key that matches one of ours only when case is ignored, wherever
// it appears. An empty value means the key's default. Errors name the key,
// the value, what is accepted and where the value came from.
func Load(opts LoadOptions) (*Config, error) {
	specs := keySpecs()
	canonical := make(map[string]string, len(specs)) // lower-case name → name
	for _, s := range specs {
		canonical[strings.ToLower(s.name)] = s.name
	}
	// Viper holds the layers, each where viper puts it, so that its
	// precedence is ours: the defaults (SetDefault), the file (the config
	// layer), the environment (BindEnv) and the overrides (the flag
	// layer: they are the --set flags). This package only parses the file
	// (for line numbers and case-sensitive keys) and decodes the values.
	v := viper.New()
	v.AllowEmptyEnv(true) // an empty BK_<key> means the default, as an empty value in the file
	for _, s := range specs {
		v.SetDefault(s.name, s.def)
	}

	// The file layer.
	data, name := embeddedServerConf, EmbeddedServerConfName
	if opts.Path != "" {
		var err error
		if data, err = os.ReadFile(opts.Path); err != nil {
			return nil, errors.Wrapf(err, "reading configuration file")
		}
		name = opts.Path
	}
	props, err := parseProperties(data)
	if err != nil {
		return nil, errors.Wrapf(err, "%s", name)
	}
	fileValues := map[string]any{}
	fileLines := map[string]int{}
	// Every problem of every source is reported at once; the keys the
	// sources set that are not ours are described after a successful load.
	var probs problems
	var unused []unusedKey
	for _, p := range props {
		key, known, err := lookupKey(canonical, p.key)
		if err != nil {
			probs.addf("%s:%d: %v", name, p.line, err)
			continue
		}
		if known {
			fileValues[key] = p.value
			fileLines[key] = p.line
		} else {
			unused = append(unused, unusedKey{key: p.key, value: p.value, source: fmt.Sprintf("%s:%d", name, p.line)})
		}
	}
	if err := v.MergeConfigMap(fileValues); err != nil {
		return nil, errors.Wrapf(err, "%s", name)
	}

	// The environment layer. Viper looks the variables up; the scan only
	// rejects a variable that names one of our keys in the wrong case.
	if opts.Environment {
		for _, kv := range os.Environ() {
			varName, value, _ := strings.Cut(kv, "=")
			if !strings.HasPrefix(varName, EnvPrefix) {
				continue
			}
			_, known, err := lookupKey(canonical, strings.TrimPrefix(varName, EnvPrefix))
			if err != nil {
				probs.addf("environment variable %s: %v", varName, err)
			} else if !known {
				unused = append(unused, unusedKey{key: strings.TrimPrefix(varName, EnvPrefix), value: value,
					source: "environment variable " + varName, env: true})
			}
		}
		for _, s := range specs {
			if err := v.BindEnv(s.name, EnvPrefix+s.name); err != nil {
				return nil, errors.Wrap(err, "environment")
			}
		}
	}

	// The override layer.
	overrides := make(map[string]string, len(opts.Overrides))
	overrideKeys := make([]string, 0, len(opts.Overrides))
	for k := range opts.Overrides {
		overrideKeys = append(overrideKeys, k)
	}
	sort.Strings(overrideKeys)
	for _, k := range overrideKeys {
		key, known, err := lookupKey(canonical, strings.TrimSpace(k))
		if err != nil {
			probs.addf("override: %v", err)
			continue
		}
		if !known {
			// An upstream key is taken as a file takes it (and noted the
			// same way); any other key is a mistake on a command line,
			// which nothing else shares.
			if isUpstreamKey(strings.TrimSpace(k)) {
				unused = append(unused, unusedKey{key: strings.TrimSpace(k), value: opts.Overrides[k], source: "override"})
			} else if near := nearestKnownKey(k); near != "" {
				probs.addf("override: unknown key %q; did you mean %q? (the keys are listed in docs/configuration.md)", k, near)
			} else {
				probs.addf("override: unknown key %q (the keys are listed in docs/configuration.md)", k)
			}
			continue
		}
		overrides[key] = opts.Overrides[k]
		if err := v.BindFlagValue(key, overrideFlag{name: key, value: opts.Overrides[k]}); err != nil {
			return nil, errors.Wrap(err, "override")
		}
	}

	// source names the layer a key's value came from, for errors.
	source := func(key string) string {
		if _, ok := overrides[key]; ok {
			return "override"
		}
		if opts.Environment {
			if _, ok := os.LookupEnv(EnvPrefix + key); ok {
				return "environment variable " + EnvPrefix + key
			}
		}
		if line, ok := fileLines[key]; ok {
			return fmt.Sprintf("%s:%d", name, line)
		}
		return "default"
	}

	// Decode every key; a value that does not decode is a problem, and
	// its key takes its default, so that the validation below still
	// reports the problems of the other keys (its findings about a key
	// already reported are left out).
	c := &Config{Source: name}
	failed := map[string]bool{}
	for _, s := range specs {
		raw := strings.TrimSpace(v.GetString(s.name))
		value := raw
		if value == "" {
			value = s.def
		}
		if err := s.decode(c, value); err != nil {
			probs.addf("%s: %q %v (from %s)", s.name, raw, err, source(s.name))
			failed[s.name] = true
			_ = s.decode(c, s.def) // TestDefaultsDecode: every default decodes
		}
	}
	c.UnusedKeys, c.KeyWarnings = keyNotes(unused)
	if c.IndexDirectories == nil {
		c.IndexDirectories = append([]string(nil), c.LedgerDirectories...)
	}
	c.resolveJournalDirectories()
	if c.GC.CompactionRateByEntries == 0 { // empty: compactionRate's
		c.GC.CompactionRateByEntries = c.CompactionRate
		if c.CompactionRate <= 0 {
			c.GC.CompactionRateByEntries = -1
		}
	}
	if c.DiskUsageLwmThreshold == 0 {
		c.DiskUsageLwmThreshold = c.DiskUsageThreshold
	}
	if c.HTTPServerMaxEntryBytesInFlight == 0 {
		c.HTTPServerMaxEntryBytesInFlight = max(c.WriteCacheMaxSizeMB<<20/4, c.NettyMaxFrameSizeBytes)
	}
	if c.MinUsableSizeForEntryLogCreation == 0 {
		c.MinUsableSizeForEntryLogCreation = c.LogSizeLimit / 5 * 6
	}
	var invalid problems
	c.validate(&invalid)
	for _, msg := range invalid.list {
		if key, _, _ := strings.Cut(msg, ":"); !failed[key] {
			probs.list = append(probs.list, msg)
		}
	}
	if err := probs.err(""); err != nil {
		return nil, err
	}
	return c, nil
}

// overrideFlag is a --set override as viper's flag layer takes it: always
// changed, a string that Load decodes.
type overrideFlag struct{ name, value string }

func (f overrideFlag) HasChanged() bool    { return true }
func (f overrideFlag) Name() string        { return f.name }
func (f overrideFlag) ValueString() string { return f.value }
func (f overrideFlag) ValueType() string   { return "string" }

// lookupKey resolves a key as written to its canonical spelling. A key that
// is ours only when case is ignored is an error, since BookKeeper would
// silently ignore it.
func lookupKey(canonical map[string]string, key string) (name string, known bool, err error) {
	name, ok := canonical[strings.ToLower(key)]
	switch {
	case !ok:
		return "", false, nil
	case name != key:
		return "", false, errors.Newf("key %q: keys are case-sensitive; did you mean %q?", key, name)
	}
	return name, true, nil
}

// ParseOverride splits a --set argument, "key=value", at its first '='.
func ParseOverride(arg string) (key, value string, err error) {
	key, value, ok := strings.Cut(arg, "=")
	key = strings.TrimSpace(key)
	if !ok || key == "" {
		return "", "", errors.Newf("override %q: expected key=value", arg)
	}
	return key, value, nil
}

// Settings returns every key Load honours with its effective value, as it
// would be written in bk_server.conf (for logs and the server_config
// endpoint). The token file's path is included, never the token, and a
// password set is shown as "(hidden)".
func (c *Config) Settings() map[string]string {
	specs := keySpecs()
	m := make(map[string]string, len(specs))
	for _, s := range specs {
		m[s.name] = s.encode(c)
		if s.secret && m[s.name] != "" {
			m[s.name] = hiddenValue
		}
	}
	return m
}

// Keys returns the names of the keys Load honours, in documentation order.
func Keys() []string {
	specs := keySpecs()
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.name
	}
	return names
}
