// Package conf is bookie-index's configuration: BookKeeper's bk_server.conf
// keys, and the RocksDB OPTIONS file of the entry location index, mapped
// onto the engine's options (lsm.Options).
//
// # bk_server.conf
//
// Load reads a Java properties file (see parseProperties for the exact
// syntax) and honours the keys listed in docs/configuration.md with
// BookKeeper's names, meanings and, unless documented otherwise, defaults.
// The sources, from lowest to highest precedence:
//
//  1. the defaults, which are the values of the embedded bk_server.conf;
//  2. the file: LoadOptions.Path, or the embedded bk_server.conf (shipped
//     as conf/bk_server.conf) so that the service starts without one;
//  3. the environment: BK_<key>=value, the key spelled exactly as in the
//     file (BK_httpServerPort=9090), as BookKeeper's Docker images do;
//  4. overrides (the command line's --set key=value).
//
// Keys are case-sensitive, as in BookKeeper. Keys bookie-index does not use
// are ignored in the file and in the environment, since bk_server.conf is
// shared with the rest of a bookie; an override of an unknown key, and any
// key that matches one of ours only when case is ignored, is an error. An
// empty value means the default. Decoding and validation errors name the
// key, the value, what is accepted and where the value came from:
//
//	dbStorage_rocksDB_blockSize: "abc" is not an integer (from /etc/bk_server.conf:12)
//
// Viper holds the layers, each in its own: SetDefault for the defaults,
// its config layer for the file, BindEnv for the environment
// (LoadOptions.Environment) and its flag layer for the overrides, so that
// viper's precedence is the one above. This package parses the file itself
// (for line numbers and case-sensitive keys) and decodes the values, so
// that a malformed value is an error naming its source rather than a zero.
//
// # Entry location options
//
// Config.EntryLocationOptions chooses the engine options as BookKeeper
// chooses the RocksDB options of its "locations" database. If
// entryLocationRocksdbConf names an existing file ("config-file mode"), it
// is read as a RocksDB OPTIONS ini file ([DBOptions], [CFOptions
// "default"], [TableOptions/BlockBasedTable "default"]); options the engine
// uses are mapped, RocksDB-only options are reported as ignored, and
// anything else is an error naming the file, line, section, option and
// value. Otherwise ("bookie-conf mode", the default, since the shipped
// OPTIONS file is named *.conf.default) the dbStorage_rocksDB_* keys are
// mapped exactly as upstream's initializeRocksDBWithBookieConf maps them
// for the entry location database.
//
// This package imports only lsm (public) among bookie-index's packages;
// only cmd imports it (the storage's packages take options, not a
// configuration).
package conf
