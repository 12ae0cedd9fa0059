package reader

import (
	"os"

	"github.com/polyhedral/cpm/reader/internal/core"
	"github.com/polyhedral/cpm/reader/libsvm"
	"github.com/polyhedral/cpm/sparsevec"
)

// Load reads the whole file at path into one CSR. The file may be LIBSVM
// text (see Open: compressed or not), read by libsvm.Load, or any other
// format DetectFormat recognises (Arrow IPC, Parquet, the binary cache),
// which is read through OpenBlocks. "-" is standard input in any of these
// formats, read as OpenStdin says.
//
// LIBSVM text is read by one goroutine that reads and decompresses the
// input into chunks of whole lines (WithChunkBytes) and WithWorkers
// goroutines (default GOMAXPROCS) that parse chunks into blocks; the blocks
// are joined in file order, so the result does not depend on scheduling.
// The first error in file order is returned, with its absolute line number,
// and every goroutine has ended when Load returns. An empty input gives a
// CSR with no rows.
func Load(path string, opts ...Option) (*sparsevec.CSR, error) {
	if path == "-" {
		return loadStdin(os.Stdin, opts)
	}
	o := core.BuildOptions(opts)
	if f, err := detectFormat(path, &o); err == nil && f != LIBSVM {
		b, err := OpenBlocks(path, 1<<16, opts...)
		if err != nil {
			return nil, err
		}
		return ReadAll(b)
	}
	return libsvm.Load(path, opts...)
}
