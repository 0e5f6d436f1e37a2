package conf

import (
	"fmt"

	"github.com/bookie-index/bookie-index/lsm"
)

// RocksDB does not refuse some out-of-range option values: it clips them
// when it opens the database (SanitizeCfOptions and SanitizeOptions in
// db/column_family.cc and db/db_impl/db_impl_open.cc, and the block-based
// table factory's InitializeOptions). An OPTIONS file RocksDB accepts is
// accepted here too: such a value is clipped the same way, with a note
// naming RocksDB's rule. The engine's own limits, where they are narrower
// than RocksDB's, stay errors (the value would not be what was asked).

// rocksSanitizer clips one option as RocksDB does. clip changes o and
// returns the new value as written in an OPTIONS file, or "" if the value
// was in range.
type rocksSanitizer struct {
	rule string
	clip func(o *lsm.Options) string
}

// rocksSanitizers returns RocksDB's clipping rules, by option name.
func rocksSanitizers() map[string]rocksSanitizer {
	return map[string]rocksSanitizer{
		"write_buffer_size": {"RocksDB's SanitizeCfOptions clips write_buffer_size to [64 KiB, 64 GiB]", func(o *lsm.Options) string {
			return clipInt64(&o.WriteBufferSize, 64<<10, 64<<30)
		}},
		"max_write_buffer_number": {"RocksDB's SanitizeCfOptions raises max_write_buffer_number to at least 2", func(o *lsm.Options) string {
			return clipInt(&o.MaxWriteBufferNumber, 2, 1<<31-1)
		}},
		"num_levels": {"RocksDB's SanitizeCfOptions raises num_levels to at least 2 with level compaction", func(o *lsm.Options) string {
			return clipInt(&o.NumLevels, 2, 1<<31-1)
		}},
		"level0_file_num_compaction_trigger": {"RocksDB's SanitizeCfOptions raises level0_file_num_compaction_trigger 0 to 1", func(o *lsm.Options) string {
			return clipInt(&o.Level0FileNumCompactionTrigger, 1, 1<<31-1)
		}},
		"max_bytes_for_level_multiplier": {"RocksDB's SanitizeCfOptions raises a max_bytes_for_level_multiplier of 0 or less to 1", func(o *lsm.Options) string {
			if o.MaxBytesForLevelMultiplier > 0 {
				return ""
			}
			o.MaxBytesForLevelMultiplier = 1
			return "1"
		}},
		"max_open_files": {"RocksDB's SanitizeOptions clips max_open_files other than -1 to [20, 4194304]", func(o *lsm.Options) string {
			if o.MaxOpenFiles == -1 {
				return ""
			}
			return clipInt(&o.MaxOpenFiles, 20, 0x400000)
		}},
		"block_restart_interval": {"RocksDB's block-based table factory raises block_restart_interval to at least 1", func(o *lsm.Options) string {
			return clipInt(&o.BlockRestartInterval, 1, 1<<31-1)
		}},
		"index_block_restart_interval": {"RocksDB's block-based table factory raises index_block_restart_interval to at least 1", func(o *lsm.Options) string {
			return clipInt(&o.IndexBlockRestartInterval, 1, 1<<31-1)
		}},
	}
}

func clipInt64(v *int64, lo, hi int64) string {
	if *v >= lo && *v <= hi {
		return ""
	}
	*v = min(max(*v, lo), hi)
	return fmt.Sprint(*v)
}

func clipInt(v *int, lo, hi int) string {
	if *v >= lo && *v <= hi {
		return ""
	}
	*v = min(max(*v, lo), hi)
	return fmt.Sprint(*v)
}
