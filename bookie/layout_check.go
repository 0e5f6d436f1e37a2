package bookie

// CheckLayout runs Open's directory layout guard (layout_guard.go) on
// opts' directories without writing anything, and returns the error Open
// would refuse them with: nil when Open would accept the list (perhaps
// after rewriting some copies: an interrupted expansion, a moved index
// directory, a copy of format version 1, a first start). The offline
// check (`bookie-index check`) runs it so that it refuses what Open
// refuses.
func CheckLayout(opts *Options) error {
	r, err := opts.resolve()
	if err != nil {
		return err
	}
	_, err = checkLayout(r)
	return err
}
