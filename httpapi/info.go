package httpapi

import (
	"net/http"
)

// PathBookieInfo is upstream's BookieInfoService.
const PathBookieInfo = "/api/v1/bookie/info"

// serveBookieInfo answers upstream's BookieInfoService: the free and total
// bytes of the file systems holding the ledger directories, each file
// system counted once (upstream's LedgerDirsManager.getTotalFreeSpace),
// plus each directory's, which upstream does not list. Free is what an
// unprivileged writer may use (f_bavail), as Java's File.getUsableSpace,
// which upstream reads. Other methods get
// 404 "Only GET is supported.", as upstream answers.
func (s *Service) serveBookieInfo(w http.ResponseWriter, r *http.Request) {
	if !allowGet(w, r, msgInfoMethod) {
		return
	}
	var free, total int64
	seen := map[uint64]bool{}
	dirs := make([]any, len(s.dirs))
	for i, d := range s.dirs {
		ledger, lerr := s.opts.FS.DiskUsage(d.LedgerDir)
		index, ierr := s.opts.FS.DiskUsage(d.IndexDir)
		if lerr != nil || ierr != nil {
			err := lerr
			if err == nil {
				err = ierr
			}
			s.log.Warn("bookie info: reading a directory's free space", "ledgerDir", d.LedgerDir, "indexDir", d.IndexDir, "err", err)
			writeText(w, http.StatusInternalServerError, "reading free space: "+err.Error())
			return
		}
		if !seen[ledger.ID] {
			seen[ledger.ID] = true
			free += int64(ledger.Usable)
			total += int64(ledger.Total)
		}
		dirs[i] = jsonObject{
			{"ledgerDir", d.LedgerDir},
			{"indexDir", d.IndexDir},
			{"freeSpace", int64(ledger.Usable)},
			{"totalSpace", int64(ledger.Total)},
			{"indexFreeSpace", int64(index.Usable)},
			{"indexTotalSpace", int64(index.Total)},
		}
	}
	writeJSON(w, http.StatusOK, jsonObject{
		{"freeSpace", free},
		{"totalSpace", total},
		{"directories", dirs},
	})
}
