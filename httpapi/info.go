package httpapi

import (
	"net/http"
)

// PathBookieInfo is upstream's BookieInfoService.
const PathBookieInfo = "/api/v1/bookie/info"

// dirSpace is the space of the file system holding a directory.
type dirSpace struct {
	// fsID identifies the file system, so that directories sharing one
	// are counted once.
	fsID       uint64
	free, size int64
}

// serveBookieInfo answers upstream's BookieInfoService: the free and total
// bytes of the file systems holding the ledger directories, each file
// system counted once (upstream's LedgerDirsManager.getTotalFreeSpace),
// plus each directory's, which upstream does not list. Other methods get
// 404 "Only GET is supported.", as upstream answers.
func (s *Service) serveBookieInfo(w http.ResponseWriter, r *http.Request) {
	if !allowGet(w, r, msgInfoMethod) {
		return
	}
	var free, total int64
	seen := map[uint64]bool{}
	dirs := make([]any, len(s.dirs))
	for i, d := range s.dirs {
		ledger, lerr := statDir(d.LedgerDir)
		index, ierr := statDir(d.IndexDir)
		if lerr != nil || ierr != nil {
			err := lerr
			if err == nil {
				err = ierr
			}
			s.log.Warn("bookie info: reading a directory's free space", "ledgerDir", d.LedgerDir, "indexDir", d.IndexDir, "err", err)
			writeText(w, http.StatusInternalServerError, "reading free space: "+err.Error())
			return
		}
		if !seen[ledger.fsID] {
			seen[ledger.fsID] = true
			free += ledger.free
			total += ledger.size
		}
		dirs[i] = jsonObject{
			{"ledgerDir", d.LedgerDir},
			{"indexDir", d.IndexDir},
			{"freeSpace", ledger.free},
			{"totalSpace", ledger.size},
			{"indexFreeSpace", index.free},
			{"indexTotalSpace", index.size},
		}
	}
	writeJSON(w, http.StatusOK, jsonObject{
		{"freeSpace", free},
		{"totalSpace", total},
		{"directories", dirs},
	})
}
