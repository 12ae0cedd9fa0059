package input

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/reader/rowcache"
	"github.com/polyhedral/cpm/sparsevec"
)

// ErrStdinOnce is wrapped by the error of a pass over standard input that
// would have to read it again: its rows are kept for later passes only by
// a first pass that completes.
var ErrStdinOnce = errors.New("standard input is read once")

// ErrSpillLimit is wrapped by the error of a first pass over standard
// input whose spill file grew beyond Config.SpillLimit.
var ErrSpillLimit = errors.New("the spill file of standard input reached its size limit")

// spillName is the file name of the spill in its temporary directory.
const spillName = "stdin.cpmcache"

// makeSpill creates the temporary directory of the spill of standard
// input and sets the cache to the spill file in it.
func (in *Input) makeSpill(cfg Config) error {
	dir, err := os.MkdirTemp(cfg.SpillDir, "cpm-spill-")
	if err != nil {
		return fmt.Errorf("standard input: a streamed run keeps its rows in a spill file: %w", err)
	}
	in.spillDir, in.spillMax = dir, cfg.SpillLimit
	in.cache = filepath.Join(dir, spillName)
	in.status = CacheStatus{Path: in.cache, Use: CacheSpill}
	return nil
}

// tempName is the file name of a TempCache in its temporary directory.
const tempName = "rows.cpmcache"

// makeTemp creates the temporary directory of a TempCache and sets the
// cache to the file in it.
func (in *Input) makeTemp(cfg Config) error {
	dir, err := os.MkdirTemp(cfg.SpillDir, "cpm-cache-")
	if err != nil {
		return fmt.Errorf("a temporary cache: %w", err)
	}
	in.spillDir = dir
	in.cache = filepath.Join(dir, tempName)
	in.status = CacheStatus{Path: in.cache, Use: CacheTemp}
	return nil
}

// spillCheck is the first pass over standard input: it fails the pass once
// the spill file holds more than limit bytes (0: no limit), counted as
// they reach the file (so to within the cache writer's buffer of 1 MiB
// while the pass goes on, exactly at its end), and names the spill file in
// an error that is not about the rows themselves (a full disk).
type spillCheck struct {
	reader.BlockReader
	w     *rowcache.Writer
	file  string
	limit int64
}

func (s *spillCheck) Next() (*sparsevec.CSR, error) {
	b, err := s.BlockReader.Next()
	if (err == nil || err == io.EOF) && s.limit > 0 {
		if n := s.w.Bytes(); n > s.limit {
			if b != nil {
				s.BlockReader.Release(b)
			}
			return nil, fmt.Errorf("standard input: spill file %s: %w (%d bytes, limit %d)", s.file, ErrSpillLimit, n, s.limit)
		}
	}
	if err != nil && err != io.EOF && !errors.Is(err, reader.ErrBadInput) && !errors.Is(err, context.Canceled) {
		return nil, fmt.Errorf("standard input: keeping its rows in spill file %s: %w", s.file, err)
	}
	return b, err
}
