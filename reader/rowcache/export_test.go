package rowcache

// The limits of a block header, for the tests of package rowcache_test.
const (
	MaxBlockRows = maxCacheBlockRows
	MaxBlockNNZ  = maxCacheBlockNNZ
)

// FailWrites makes every later write of w fail with err.
func FailWrites(w *Writer, err error) { w.err = err }
