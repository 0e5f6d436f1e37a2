package lsm

// Err returns the sticky background error that stopped the DB's writes (a
// failed WAL, flush or manifest write), or nil. Health checks report it:
// a DB with one cannot make what it is given durable.
func (d *DB) Err() error { return d.stickyErr() }
