package conf

import (
	"fmt"
	"sort"
	"strings"
)

// upstreamKeys returns the keys of BookKeeper's bk_server.conf (its
// conf/bk_server.conf, every key it lists, set or commented out). A
// bk_server.conf shared with a bookie holds many of them; those
// bookie-index does not use are recognized (one summary line at start,
// not a warning each), and any other key that is close to one of ours gets
// a did-you-mean warning.
func upstreamKeys() []string {
	return []string{
		"advertisedAddress", "allocatorLeakDetectionPolicy", "allocatorOutOfMemoryPolicy",
		"allocatorPoolingConcurrency", "allocatorPoolingPolicy", "allowEphemeralPorts", "allowLoopback",
		"allowMultipleDirsUnderSameDiskPartition", "allowShadedLedgerManagerFactoryClass", "allowStorageExpansion",
		"auditorAcquireConcurrentOpenLedgerOperationsTimeOutMSec", "auditorLedgerVerificationPercentage",
		"auditorMaxNumberOfConcurrentOpenLedgerOperations", "auditorPeriodicBookieCheckInterval",
		"auditorPeriodicCheckInterval", "authorizedRoles", "autoRecoveryDaemonEnabled",
		"bookieAddressResolverEnabled", "bookieAuthProviderFactoryClass", "bookieDeathWatchInterval", "bookieId",
		"bookiePort", "byteBufAllocatorSizeInitial", "byteBufAllocatorSizeMax", "byteBufAllocatorSizeMin",
		"codahaleStatsCSVEndpoint", "codahaleStatsGraphiteEndpoint", "codahaleStatsJmxEndpoint",
		"codahaleStatsOutputFrequencySeconds", "codahaleStatsPrefix", "codahaleStatsSlf4jEndpoint",
		"compactionMaxOutstandingRequests", "compactionRate", "compactionRateByBytes", "compactionRateByEntries",
		"dbStorage_directIOEntryLoggerMaxFdCacheTimeSeconds", "dbStorage_directIOEntryLoggerReadBufferSizeMB",
		"dbStorage_directIOEntryLoggerTotalReadBufferSizeMB", "dbStorage_directIOEntryLoggerTotalWriteBufferSizeMB",
		"dbStorage_readAheadCacheBatchBytesSize", "dbStorage_readAheadCacheBatchSize",
		"dbStorage_readAheadCacheMaxSizeMb", "dbStorage_rocksDB_blockCacheSize", "dbStorage_rocksDB_blockSize",
		"dbStorage_rocksDB_bloomFilterBitsPerKey", "dbStorage_rocksDB_checksum_type",
		"dbStorage_rocksDB_format_version", "dbStorage_rocksDB_logPath", "dbStorage_rocksDB_maxSizeInLevel1MB",
		"dbStorage_rocksDB_numFilesInLevel0", "dbStorage_rocksDB_numLevels", "dbStorage_rocksDB_sstSizeInMB",
		"dbStorage_rocksDB_writeBufferSizeMB", "dbStorage_writeCacheMaxSizeMb", "defaultRocksdbConf", "digestType",
		"disableServerSocketBind", "diskCheckInterval", "diskUsageLwmThreshold", "diskUsageThreshold",
		"diskUsageWarnThreshold", "dlog.bkcAckQuorumSize", "dlog.bkcEnsembleSize", "dlog.bkcWriteQuorumSize",
		"enableBusyWait", "enableDigestTypeAutodetection", "enableLocalTransport", "enableStatistics",
		"enableTaskExecutionStats", "enforceMinNumFaultDomainsForWrite", "enforceMinNumRacksPerWriteQuorum",
		"ensemblePlacementPolicy", "entryLocationCompactionInterval", "entryLocationRocksdbConf",
		"entryLogFilePreallocationEnabled", "entryLogPerLedgerCounterLimitsMultFactor", "entryLogPerLedgerEnabled",
		"entrylogMapAccessExpiryTimeInSeconds", "exposeDefaultJVMMetrics", "extraServerComponents",
		"fileInfoCacheInitialCapacity", "fileInfoMaxIdleTime", "flushEntrylogBytes", "flushInterval",
		"forceAllowCompaction", "forceReadOnlyBookie", "gcEntryLogMetadataCacheEnabled",
		"gcEntryLogMetadataCachePath", "gcMetadataOpRateLimit", "gcOverreplicatedLedgerMaxConcurrentRequests",
		"gcOverreplicatedLedgerWaitTime", "gcWaitTime", "httpServerClass", "httpServerEnabled", "httpServerHost",
		"httpServerKeyStorePassword", "httpServerKeyStorePath", "httpServerPort", "httpServerTlsEnable",
		"httpServerTrustStorePassword", "httpServerTrustStorePath", "ignoreExtraServerComponentsStartupFailures",
		"indexDirectories", "isForceGCAllowWhenNoSpace", "isThrottleByBytes", "journalAdaptiveGroupWrites",
		"journalAlignmentSize", "journalBufferedEntriesThreshold", "journalBufferedWritesThreshold",
		"journalChannelProvider", "journalDirectories", "journalDirectory", "journalFlushWhenQueueEmpty",
		"journalFormatVersionToWrite", "journalMaxBackups", "journalMaxGroupWaitMSec", "journalMaxMemorySizeMb",
		"journalMaxSizeMB", "journalPreAllocSizeMB", "journalQueueSize", "journalRemoveFromPageCache",
		"journalSyncData", "journalWriteBufferSizeKB", "journalWriteData", "ledgerDirectories",
		"ledgerManagerFactoryClass", "ledgerManagerType", "ledgerMetadataRocksdbConf", "ledgerStorageClass",
		"listeningInterface", "logSizeLimit", "lostBookieRecoveryDelay", "majorCompactionInterval",
		"majorCompactionMaxTimeMillis", "majorCompactionThreshold", "maxPendingAddRequestsPerThread",
		"maxPendingReadRequestsPerThread", "maximumNumberOfActiveEntryLogs", "metadataServiceUri",
		"minNumRacksPerWriteQuorum", "minUsableSizeForEntryLogCreation", "minUsableSizeForHighPriorityWrites",
		"minUsableSizeForIndexFileCreation", "minorCompactionInterval", "minorCompactionMaxTimeMillis",
		"minorCompactionThreshold", "nettyMaxFrameSizeBytes", "networkTopologyScriptFileName",
		"networkTopologyScriptNumberArgs", "numAddWorkerThreads", "numHighPriorityWorkerThreads",
		"numLongPollWorkerThreads", "numOfMemtableFlushThreads", "numReadWorkerThreads", "openFileLimit",
		"openLedgerRereplicationGracePeriod", "pageLimit", "pageSize", "passwd", "permittedStartupUsers",
		"persistBookieStatusEnabled", "readBufferSizeBytes", "readOnlyModeEnabled",
		"readOnlyModeOnAnyDiskFullEnabled", "readWorkerThreadsThrottlingEnabled", "reorderReadSequenceEnabled",
		"reppDnsResolverClass", "requestTimerNumTicks", "requestTimerTickDurationMs", "rereplicationEntryBatchSize",
		"rwRereplicateBackoffMs", "sanityCheckMetricsEnabled", "serverNumIOThreads", "serverSockKeepalive",
		"serverTcpLinger", "serverTcpNoDelay", "shadedLedgerManagerFactoryClassPrefix", "skipListArenaChunkSize",
		"skipListArenaMaxAllocSize", "skipListSizeLimit", "sortedLedgerStorageEnabled",
		"stickyReadSEnabled", "storage.cluster.controller.schedule.interval.ms", "storage.range.store.dirs",
		"storage.serve.readonly.tables", "storageserver.grpc.port",
		"storeSystemTimeAsLedgerUnderreplicatedMarkTime", "tlsCertFilesRefreshDurationSeconds",
		"tlsCertificatePath", "tlsClientAuthentication", "tlsKeyStore", "tlsKeyStorePasswordPath",
		"tlsKeyStoreType", "tlsProvider", "tlsProviderFactoryClass", "tlsTrustStore", "tlsTrustStorePasswordPath",
		"tlsTrustStoreType", "useHostNameAsBookieID", "useShortHostName", "useTargetEntryLogSizeForGc",
		"useTransactionalCompaction", "verifyMetadataOnGC", "writeBufferSizeBytes", "zkEnableSecurity",
		"zkLedgersRootPath", "zkReplicationTaskRateLimit", "zkRequestRateLimit", "zkRetryBackoffMaxMs",
		"zkRetryBackoffStartMs", "zkServers", "zkTimeout",
	}
}

// unusedKey is a key a source set that Load does not use.
type unusedKey struct {
	key, source string
}

// keyNotes describes the keys the sources set that Load does not use: one
// line listing the upstream keys recognized but not used here, and a
// did-you-mean warning for each other key close to one of ours (a typo
// would otherwise leave a setting at its default without a word). Keys
// neither upstream's nor close to ours are listed in one line too.
func keyNotes(unused []unusedKey, ours []string) (summary []string, warnings []string) {
	upstream := map[string]bool{}
	for _, k := range upstreamKeys() {
		upstream[k] = true
	}
	var recognized, other []string
	seen := map[string]bool{}
	for _, u := range unused {
		if seen[u.key] {
			continue
		}
		seen[u.key] = true
		if upstream[u.key] {
			recognized = append(recognized, u.key)
			continue
		}
		if near := nearestKey(u.key, ours); near != "" {
			warnings = append(warnings, fmt.Sprintf("%s: key %q is not used by bookie-index; did you mean %q?", u.source, u.key, near))
			continue
		}
		other = append(other, u.key)
	}
	sort.Strings(recognized)
	sort.Strings(other)
	if len(recognized) > 0 {
		summary = append(summary, fmt.Sprintf("%d BookKeeper keys recognized but not used by bookie-index: %s", len(recognized), strings.Join(recognized, ", ")))
	}
	if len(other) > 0 {
		summary = append(summary, fmt.Sprintf("%d keys unknown to bookie-index and BookKeeper's bk_server.conf, ignored: %s", len(other), strings.Join(other, ", ")))
	}
	return summary, warnings
}

// nearestKey returns the key of ours closest to key, if it is close enough
// to be a typo (an edit distance of at most a third of its length, and 3),
// or "".
func nearestKey(key string, ours []string) string {
	best, bestDist := "", min(len(key)/3, 3)+1
	for _, k := range ours {
		if d := editDistance(strings.ToLower(k), strings.ToLower(key)); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}
