package ondisk

import "testing"

// FuzzDecodeLedgerRecord: any bytes decode to a record or an error, and a
// decoded record encodes back to something that decodes the same.
func FuzzDecodeLedgerRecord(f *testing.F) {
	f.Add(EncodeLedgerInfo(&LedgerInfo{Exists: true, Fenced: true, MasterKey: []byte("key"), ExplicitLAC: []byte("lac"), Floor: 1 << 40}))
	f.Add(EncodeLedgerInfo(&LedgerInfo{}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		info, err := DecodeLedgerInfo(data)
		if err != nil {
			return
		}
		again, err := DecodeLedgerInfo(EncodeLedgerInfo(&info))
		if err != nil {
			t.Fatalf("a decoded record does not decode after encoding: %v", err)
		}
		if again.Exists != info.Exists || again.Fenced != info.Fenced || again.Floor != info.Floor ||
			string(again.MasterKey) != string(info.MasterKey) || string(again.ExplicitLAC) != string(info.ExplicitLAC) {
			t.Fatalf("round trip changed the record: %+v -> %+v", info, again)
		}
	})
}
