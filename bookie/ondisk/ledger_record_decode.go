package ondisk

// DecodeLedgerRecord decodes one record of a ledgers index, its key and
// value as the engine holds them (the layout is in ledger_record.go and
// docs/format.md), for tools that read the index directly. A record that
// does not decode gives an error saying why.
func DecodeLedgerRecord(key, value []byte) (int64, LedgerInfo, error) {
	id, err := DecodeLedgerKey(key)
	if err != nil {
		return 0, LedgerInfo{}, err
	}
	info, err := DecodeLedgerInfo(value)
	return id, info, err
}
