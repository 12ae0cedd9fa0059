package reader

import (
	"path/filepath"
	"testing"

	"github.com/polyhedral/cpm/reader/internal/core"
	"github.com/polyhedral/cpm/reader/rowcache"
	"github.com/polyhedral/cpm/sparsevec"
)

// TestReleaseNotHeldPanics checks every BlockReader's Release: a block
// released twice, or never handed out, panics with notHeld (a second
// Release would otherwise hand the block out twice).
func TestReleaseNotHeldPanics(t *testing.T) {
	m := sampleCSR(testRand(), 20)
	dir := t.TempDir()
	open := map[string]func() (core.BlockReader, error){}
	for _, ext := range []string{".libsvm", ".arrow", ".arrows", ".parquet"} {
		path := filepath.Join(dir, "x"+ext)
		writeAll(t, path, m, 20, core.WithBatchRows(5))
		open[ext] = func() (core.BlockReader, error) { return OpenBlocks(path, 5) }
	}
	src := writeSource(t, dir)
	cache := filepath.Join(dir, "x.cpmcache")
	writeCache(t, cache, src, blocksOf(m, 5))
	open["cache"] = func() (core.BlockReader, error) { return rowcache.Open(cache, 5) }
	open["tee"] = func() (core.BlockReader, error) {
		w, err := rowcache.Create(filepath.Join(dir, "tee.cpmcache"), src)
		if err != nil {
			return nil, err
		}
		s, err := OpenBlocks(filepath.Join(dir, "x.libsvm"), 5)
		if err != nil {
			return nil, err
		}
		return rowcache.Tee(s, w), nil
	}
	for name, o := range open {
		br, err := o()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, err := br.Next()
		if err != nil {
			t.Fatalf("%s: Next: %v", name, err)
		}
		br.Release(b)
		for what, blk := range map[string]*sparsevec.CSR{"released twice": b, "never handed out": new(sparsevec.CSR)} {
			func() {
				defer func() {
					if p := recover(); p != core.NotHeld {
						t.Errorf("%s: Release of a block %s: panic %v, want %q", name, what, p, core.NotHeld)
					}
				}()
				br.Release(blk)
			}()
		}
		br.Close()
	}
}
