package conf

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/bookie-index/bookie-index/internal/logging"
	"github.com/cockroachdb/errors"
)

// keySpec describes one bk_server.conf key: its BookKeeper spelling, its
// default as written in a properties file, and how it moves between that
// text and its Config field.
type keySpec struct {
	name string
	def  string
	// decode parses a trimmed value into the field. It gets "" only when
	// the default is "". Its error completes a sentence that starts with
	// the key and the value: "is not an integer".
	decode func(c *Config, value string) error
	// encode writes the field back as a properties value.
	encode func(c *Config) string
	// secret keys (passwords) are never shown: Settings reports a set
	// one as hiddenValue.
	secret bool
}

// hiddenValue stands for a secret key's value in Settings.
const hiddenValue = "(hidden)"

// keySpecs returns every key Load honours, in the order of the embedded
// bk_server.conf and docs/configuration.md.
func keySpecs() []keySpec {
	return append([]keySpec{
		dirsKey("ledgerDirectories", "data/ledgers", func(c *Config) *[]string { return &c.LedgerDirectories }),
		dirsKey("indexDirectories", "", func(c *Config) *[]string { return &c.IndexDirectories }),
		boolKey("allowStorageExpansion", "false", func(c *Config) *bool { return &c.AllowStorageExpansion }),
		dirsKey("journalDirectories", "", func(c *Config) *[]string { return &c.JournalDirectories }),
		stringKey("journalDirectory", "", func(c *Config) *string { return &c.JournalDirectory }),

		boolKey("httpServerEnabled", "true", func(c *Config) *bool { return &c.HTTPServerEnabled }),
		hostKey("httpServerHost", "127.0.0.1", func(c *Config) *string { return &c.HTTPServerHost }),
		intKey("httpServerPort", "8080", 0, 65535, func(c *Config) *int { return &c.HTTPServerPort }),
		stringKey("httpServerAuthTokenFile", "", func(c *Config) *string { return &c.HTTPServerAuthTokenFile }),
		boolKey("httpServerAllowUnauthenticated", "false", func(c *Config) *bool { return &c.HTTPServerAllowUnauthenticated }),
		optionalIntKey("httpServerMaxEntryBytesInFlight", 1, 1<<50, func(c *Config) *int64 { return &c.HTTPServerMaxEntryBytesInFlight }),
		intKey("nettyMaxFrameSizeBytes", "5242880", 1, maxFrameSize, func(c *Config) *int64 { return &c.NettyMaxFrameSizeBytes }),
		intKey("maxAddsInProgressLimit", "0", -(1 << 31), 1<<31-1, func(c *Config) *int { return &c.MaxAddsInProgressLimit }),
		intKey("maxReadsInProgressLimit", "0", -(1 << 31), 1<<31-1, func(c *Config) *int { return &c.MaxReadsInProgressLimit }),
		stringKey("indexCheckpointRootDirectory", "", func(c *Config) *string { return &c.IndexCheckpointRootDirectory }),
		boolKey("httpServerTlsEnable", "false", func(c *Config) *bool { return &c.HTTPServerTLSEnable }),
		stringKey("httpServerKeyStorePath", "", func(c *Config) *string { return &c.HTTPServerKeyStorePath }),
		secretKey("httpServerKeyStorePassword", func(c *Config) *string { return &c.HTTPServerKeyStorePassword }),
		stringKey("httpServerTrustStorePath", "", func(c *Config) *string { return &c.HTTPServerTrustStorePath }),
		secretKey("httpServerTrustStorePassword", func(c *Config) *string { return &c.HTTPServerTrustStorePassword }),

		stringKey("statsProviderClass", "", func(c *Config) *string { return &c.StatsProviderClass }),
		boolKey("prometheusStatsHttpEnable", "true", func(c *Config) *bool { return &c.PrometheusStatsHTTPEnable }),
		hostKey("prometheusStatsHttpAddress", "0.0.0.0", func(c *Config) *string { return &c.PrometheusStatsHTTPAddress }),
		intKey("prometheusStatsHttpPort", "8000", 0, 65535, func(c *Config) *int { return &c.PrometheusStatsHTTPPort }),
		durationKey("prometheusStatsLatencyRolloverSeconds", "60", time.Second, func(c *Config) *time.Duration { return &c.PrometheusStatsLatencyRollover }),

		choiceKey("logLevel", "", logging.Levels(), func(c *Config) *string { return &c.LogLevel }),
		choiceKey("logFormat", "text", logging.Formats(), func(c *Config) *string { return &c.LogFormat }),

		stringKey("entryLocationRocksdbConf", "conf/entry_location_rocksdb.conf", func(c *Config) *string { return &c.EntryLocationRocksdbConf }),
		durationKey("entryLocationCompactionInterval", "-1", time.Second, func(c *Config) *time.Duration { return &c.EntryLocationCompactionInterval }),
		durationKey("gcWaitTime", "600000", time.Millisecond, func(c *Config) *time.Duration { return &c.GCWaitTime }),
		durationKey("flushInterval", "10000", time.Millisecond, func(c *Config) *time.Duration { return &c.FlushInterval }),
		boolKey("enableStatistics", "true", func(c *Config) *bool { return &c.EnableStatistics }),
		intKey("maxOperationNumbersInSingleRocksdbWriteBatch", "100000", 1, 1<<31-1, func(c *Config) *int { return &c.MaxOperationNumbersInSingleRocksdbWriteBatch }),

		intKey("logSizeLimit", "1073741824", 0, maxLogSizeLimit, func(c *Config) *int64 { return &c.LogSizeLimit }),
		intKey("flushEntrylogBytes", "0", -1<<62, 1<<62, func(c *Config) *int64 { return &c.FlushEntrylogBytes }),
		intKey("dbStorage_writeCacheMaxSizeMb", "512", 1, maxMB, func(c *Config) *int64 { return &c.WriteCacheMaxSizeMB }),
		intKey("dbStorage_readAheadCacheMaxSizeMb", "512", 1, maxMB, func(c *Config) *int64 { return &c.ReadAheadCacheMaxSizeMB }),
		intKey("dbStorage_readAheadCacheBatchSize", "100", 1, 1<<31-1, func(c *Config) *int { return &c.ReadAheadCacheBatchSize }),
		intKey("dbStorage_readAheadCacheBatchBytesSize", "-1", -1, 1<<62, func(c *Config) *int64 { return &c.ReadAheadCacheBatchBytesSize }),
		durationKey("dbStorage_maxThrottleTimeMs", "10000", time.Millisecond, func(c *Config) *time.Duration { return &c.MaxThrottleTime }),
		durationKey("dbStorage_idleCompactionDelaySeconds", "30", time.Second, func(c *Config) *time.Duration { return &c.IdleCompactionDelay }),

		boolKey("forceReadOnlyBookie", "false", func(c *Config) *bool { return &c.ForceReadOnlyBookie }),
		boolKey("readOnlyModeEnabled", "true", func(c *Config) *bool { return &c.ReadOnlyModeEnabled }),
		optionalFloatKey("diskUsageLwmThreshold", func(c *Config) *float64 { return &c.DiskUsageLwmThreshold }),
		durationKey("diskCheckInterval", "10000", time.Millisecond, func(c *Config) *time.Duration { return &c.DiskCheckInterval }),
		boolKey("readOnlyModeOnAnyDiskFullEnabled", "true", func(c *Config) *bool { return &c.ReadOnlyModeOnAnyDiskFullEnabled }),
		intKey("minUsableSizeForIndexFileCreation", "104857600", 0, 1<<62, func(c *Config) *int64 { return &c.MinUsableSizeForIndexFileCreation }),
		optionalIntKey("minUsableSizeForEntryLogCreation", 0, 1<<62, func(c *Config) *int64 { return &c.MinUsableSizeForEntryLogCreation }),

		intKey("dbStorage_rocksDB_blockCacheSize", "268435456", 1, 1<<50, func(c *Config) *int64 { return &c.RocksDB.BlockCacheSize }),
		intKey("dbStorage_rocksDB_writeBufferSizeMB", "64", 1, maxMB, func(c *Config) *int64 { return &c.RocksDB.WriteBufferSizeMB }),
		intKey("dbStorage_rocksDB_sstSizeInMB", "64", 1, maxMB, func(c *Config) *int64 { return &c.RocksDB.SSTSizeInMB }),
		intKey("dbStorage_rocksDB_blockSize", "65536", 1, 1<<31-1, func(c *Config) *int { return &c.RocksDB.BlockSize }),
		intKey("dbStorage_rocksDB_bloomFilterBitsPerKey", "10", -(1 << 31), 1<<31-1, func(c *Config) *int { return &c.RocksDB.BloomFilterBitsPerKey }),
		intKey("dbStorage_rocksDB_numLevels", "-1", -(1 << 31), 1<<31-1, func(c *Config) *int { return &c.RocksDB.NumLevels }),
		intKey("dbStorage_rocksDB_numFilesInLevel0", "4", 1, 1<<31-1, func(c *Config) *int { return &c.RocksDB.NumFilesInLevel0 }),
		intKey("dbStorage_rocksDB_maxSizeInLevel1MB", "256", 1, maxMB, func(c *Config) *int64 { return &c.RocksDB.MaxSizeInLevel1MB }),
		boolKey("dbStorage_rocksDB_lz4CompressionEnabled", "true", func(c *Config) *bool { return &c.RocksDB.LZ4CompressionEnabled }),
		intKey("dbStorage_rocksDB_format_version", "5", 0, 1<<31-1, func(c *Config) *int { return &c.RocksDB.FormatVersion }),
		choiceKey("dbStorage_rocksDB_checksum_type", "kxxHash", checksumTypeNames(), func(c *Config) *string { return &c.RocksDB.ChecksumType }),
		stringKey("dbStorage_rocksDB_logPath", "", func(c *Config) *string { return &c.RocksDB.LogPath }),
		stringKey("dbStorage_rocksDB_logLevel", "info", func(c *Config) *string { return &c.RocksDB.LogLevel }),
		boolKey("dbStorage_rocksDB_partitionedIndexAndFiltersEnabled", "true", func(c *Config) *bool { return &c.RocksDB.PartitionedIndexAndFiltersEnabled }),
	}, append(journalKeySpecs(), gcKeySpecs()...)...)
}

// intKey is an integer key in [min, max], written in decimal.
func intKey[T ~int | ~int64](name, def string, min, max int64, field func(*Config) *T) keySpec {
	return keySpec{
		name: name,
		def:  def,
		decode: func(c *Config, value string) error {
			n, err := strconv.ParseInt(value, 10, 64)
			if err != nil {
				if errors.Is(err, strconv.ErrRange) {
					return errors.Newf("is out of range [%d, %d]", min, max)
				}
				return errors.New("is not an integer")
			}
			if n < min || n > max {
				return errors.Newf("is out of range [%d, %d]", min, max)
			}
			*field(c) = T(n)
			return nil
		},
		encode: func(c *Config) string { return strconv.FormatInt(int64(*field(c)), 10) },
	}
}

// optionalIntKey is intKey with an empty default: the empty value
// decodes to 0, which Load replaces with a default derived from other
// keys.
func optionalIntKey(name string, min, max int64, field func(*Config) *int64) keySpec {
	return emptyAsZero(intKey(name, "", min, max, field), field)
}

// emptyAsZero is the key k of field, whose empty value decodes to 0.
func emptyAsZero[T ~int | ~int64 | ~float64](k keySpec, field func(*Config) *T) keySpec {
	decode := k.decode
	k.decode = func(c *Config, value string) error {
		if value == "" {
			*field(c) = 0
			return nil
		}
		return decode(c, value)
	}
	return k
}

// optionalFloatKey is floatKey with an empty default: the empty value
// decodes to 0, which Load replaces with a default derived from other
// keys.
func optionalFloatKey(name string, field func(*Config) *float64) keySpec {
	k := floatKey(name, "", field)
	decode := k.decode
	k.decode = func(c *Config, value string) error {
		if err := decode(c, value); err != nil {
			return err
		}
		if f := *field(c); math.IsNaN(f) || math.IsInf(f, 0) {
			return errors.New("is not a number")
		}
		return nil
	}
	return emptyAsZero(k, field)
}

// durationKey is an integer number of units (seconds, milliseconds).
func durationKey(name, def string, unit time.Duration, field func(*Config) *time.Duration) keySpec {
	limit := int64(1<<63-1) / int64(unit) // keeps value*unit from overflowing
	return keySpec{
		name: name,
		def:  def,
		decode: func(c *Config, value string) error {
			n, err := strconv.ParseInt(value, 10, 64)
			if err != nil && !errors.Is(err, strconv.ErrRange) {
				return errors.Newf("is not an integer (%s)", unitName(unit))
			}
			if err != nil || n > limit || n < -limit {
				return errors.Newf("is out of range [%d, %d] (%s)", -limit, limit, unitName(unit))
			}
			*field(c) = time.Duration(n) * unit
			return nil
		},
		encode: func(c *Config) string { return strconv.FormatInt(int64(*field(c)/unit), 10) },
	}
}

func unitName(unit time.Duration) string {
	if unit == time.Second {
		return "seconds"
	}
	return "milliseconds"
}

// boolKey is a boolean, spelled as Apache Commons accepts it.
func boolKey(name, def string, field func(*Config) *bool) keySpec {
	return keySpec{
		name: name,
		def:  def,
		decode: func(c *Config, value string) error {
			b, ok := parsePropertyBool(value)
			if !ok {
				return errors.New("is not a boolean (accepted: true, false, yes, no, on, off)")
			}
			*field(c) = b
			return nil
		},
		encode: func(c *Config) string { return strconv.FormatBool(*field(c)) },
	}
}

// parsePropertyBool accepts, case-insensitively, the words Apache Commons
// Lang's BooleanUtils.toBooleanObject accepts, which is what BookKeeper's
// configuration uses.
func parsePropertyBool(s string) (value, ok bool) {
	switch strings.ToLower(s) {
	case "true", "yes", "on", "y", "t":
		return true, true
	case "false", "no", "off", "n", "f":
		return false, true
	}
	return false, false
}

func stringKey(name, def string, field func(*Config) *string) keySpec {
	return keySpec{
		name:   name,
		def:    def,
		decode: func(c *Config, value string) error { *field(c) = value; return nil },
		encode: func(c *Config) string { return *field(c) },
	}
}

// hostKey is an address to bind: a host name or an IP address. IPv4
// addresses are taken in the forms Java's InetAddress takes, which is how
// upstream reads them (a, a.b, a.b.c and a.b.c.d in decimal, the last part
// filling the remaining bytes: 127.1 is 127.0.0.1), and stored as the
// dotted quad, which is the only form Go's resolver parses.
func hostKey(name, def string, field func(*Config) *string) keySpec {
	return keySpec{
		name: name,
		def:  def,
		decode: func(c *Config, value string) error {
			host, err := canonicalIPv4(value)
			if err != nil {
				return err
			}
			*field(c) = host
			return nil
		},
		encode: func(c *Config) string { return *field(c) },
	}
}

// canonicalIPv4 returns host as a dotted quad when it is an IPv4 address
// in one of Java's numeric forms, and host unchanged when it is not
// numeric (a name, an IPv6 address). A numeric host Java would not read
// as an address (a part out of range, five parts, an empty part) is an
// error, and so is a part with a leading zero: Java reads 0177 as decimal
// 177, the C library and most tools as octal 127, so the address is
// ambiguous.
func canonicalIPv4(host string) (string, error) {
	if host == "" || strings.Trim(host, "0123456789.") != "" {
		return host, nil
	}
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return "", errors.Newf("is not an IPv4 address: %d parts, at most 4", len(parts))
	}
	var addr [4]byte
	for i, p := range parts {
		if p == "" {
			return "", errors.New("is not an IPv4 address: an empty part")
		}
		if len(p) > 1 && p[0] == '0' {
			return "", errors.Newf("is ambiguous: BookKeeper (Java) reads the part %q as decimal, the C library and most tools as octal; write it without leading zeros", p)
		}
		last := i == len(parts)-1
		bits := 8
		if last {
			bits = 8 * (4 - i)
		}
		n, err := strconv.ParseUint(p, 10, 64)
		if err != nil || n >= 1<<bits {
			return "", errors.Newf("is not an IPv4 address: the part %q is above %d", p, uint64(1)<<bits-1)
		}
		if !last {
			addr[i] = byte(n)
			continue
		}
		for j := 3; j >= i; j-- {
			addr[j] = byte(n)
			n >>= 8
		}
	}
	return fmt.Sprintf("%d.%d.%d.%d", addr[0], addr[1], addr[2], addr[3]), nil
}

// secretKey is a string key whose value (a password) Settings hides.
func secretKey(name string, field func(*Config) *string) keySpec {
	k := stringKey(name, "", field)
	k.secret = true
	return k
}

// choiceKey is one of a fixed set of words, matched exactly.
func choiceKey(name, def string, choices []string, field func(*Config) *string) keySpec {
	return keySpec{
		name: name,
		def:  def,
		decode: func(c *Config, value string) error {
			if value == "" { // only when the default is empty
				*field(c) = ""
				return nil
			}
			for _, ch := range choices {
				if ch == value {
					*field(c) = value
					return nil
				}
			}
			return errors.Newf("is not accepted (accepted: %s)", strings.Join(choices, ", "))
		},
		encode: func(c *Config) string { return *field(c) },
	}
}

// dirsKey is a comma-separated list of directories. Blanks around names
// are dropped; an empty name between commas is an error. The empty value
// decodes to nil.
func dirsKey(name, def string, field func(*Config) *[]string) keySpec {
	return keySpec{
		name: name,
		def:  def,
		decode: func(c *Config, value string) error {
			if value == "" {
				*field(c) = nil
				return nil
			}
			var dirs []string
			for _, d := range strings.Split(value, ",") {
				d = strings.TrimSpace(d)
				if d == "" {
					return errors.New("has an empty directory name (expected a comma-separated list of directories)")
				}
				dirs = append(dirs, filepath.Clean(d))
			}
			*field(c) = dirs
			return nil
		},
		encode: func(c *Config) string { return strings.Join(*field(c), ",") },
	}
}
