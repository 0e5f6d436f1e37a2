#!/usr/bin/env bash
# Rewrites databases of ../rocksdbjni with Debian's ldb (RocksDB 7.8.3), with
# its defaults, into this directory, and lists each result with `ldb scan`.
# Run by hand (apt-get install rocksdb-tools); CI reads the committed output.
set -euo pipefail
cd "$(dirname "$0")"
jni=../rocksdbjni
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fresh() { # fixture -> a copy without the OPTIONS file (ldb 7.8.3 refuses newer options)
  rm -rf "$tmp/$1" && cp -r "$jni/$1" "$tmp/$1" && rm -f "$tmp/$1"/OPTIONS-*
}
finish() { # name: drop the info log, list what RocksDB reads (on a copy: ldb writes)
  rm -f "$1"/LOG*
  rm -rf "$tmp/scan" && cp -r "$1" "$tmp/scan" && ldb --db="$tmp/scan" scan --hex > "$1.scan.txt"
}

# `ldb compact` of BookKeeper's bookie-conf databases as rocksdbjni 9.9.3
# wrote them: every table rewritten with ldb's defaults (format_version 5,
# XXH3, Snappy, and the StringAppendOperator merge operator named in every
# table's properties).
for pair in loc-v9-fv5-xxhash-lz4:ldb-compact-loc ledgers-v9-fv5-xxhash-snappy:ldb-compact-ledgers; do
  src=${pair%%:*} dst=${pair##*:}
  fresh "$src"
  ldb --db="$tmp/$src" compact
  rm -rf "$dst" && cp -r "$tmp/$src" "$dst" && rm -f "$dst"/OPTIONS-*
  finish "$dst"
done

# An `ldb dump` / `ldb load --compact` round trip into a new database.
fresh loc-v10-fv5-xxh3-lz4
ldb --db="$tmp/loc-v10-fv5-xxh3-lz4" dump --hex | grep ' ==> ' > "$tmp/dump.txt"
rm -rf ldb-load-loc
ldb --db=ldb-load-loc load --create_if_missing --hex --compact < "$tmp/dump.txt"
rm -f ldb-load-loc/OPTIONS-*
finish ldb-load-loc
