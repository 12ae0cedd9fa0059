package input

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/internal/testfiles"
	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/reader/rowcache"
	"github.com/polyhedral/cpm/sparsevec"
)

// zeroText returns n rows of LIBSVM text seeded by seed, with indices
// from 1 to 40 and, if zeroAt >= 1, an index 0 added to line zeroAt.
func zeroText(n int, seed uint64, zeroAt int) []byte {
	var b bytes.Buffer
	x := seed
	next := func() uint64 { x = x*6364136223846793005 + 1442695040888963407; return x >> 33 }
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d", []int{1, -1}[next()%2])
		if i == zeroAt {
			b.WriteString(" 0:0.5")
		}
		for j := 1; j <= 40; j++ {
			if next()%4 == 0 {
				fmt.Fprintf(&b, " %d:%d", j, next()%9+1)
			}
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// readPasses is a run of Run: it reads passes passes of in (each to its
// end, or its first stop blocks, 0: all), and returns the rows of the
// last.
func readPasses(in *Input, passes, stop int) (*sparsevec.CSR, error) {
	var rows *sparsevec.CSR
	for k := 1; k <= passes; k++ {
		b, err := in.OpenPass(k)
		if err != nil {
			return nil, err
		}
		rows = new(sparsevec.CSR)
		for n := 0; stop == 0 || n < stop; n++ {
			blk, err := b.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Close()
				return nil, err
			}
			rows.AppendCSR(blk)
			b.Release(blk)
		}
		if err := b.Close(); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// checkRows fails t unless got and want hold the same rows (Dim aside).
func checkRows(t *testing.T, what string, got, want *sparsevec.CSR) {
	t.Helper()
	if !slices.Equal(got.Ptr, want.Ptr) || !slices.Equal(got.Idx, want.Idx) || !slices.Equal(got.Val, want.Val) || !slices.Equal(got.Labels, want.Labels) {
		t.Errorf("%s: rows differ from reader.Load's (%d rows, %d nonzeros; want %d, %d)", what, got.Rows(), got.NNZ(), want.Rows(), want.NNZ())
	}
}

// Run reads a file without a zero-based note, plain, gzip or zstd, as
// auto's scan does: a 1-based one in one run, a 0-based one (its index 0
// early, or late, after the first blocks and after the cache write began)
// by a run restarted once, naming the line; the cache it leaves records
// auto and holds the rows auto reads, and no temporary file is left.
func TestRunZeroBased(t *testing.T) {
	for _, c := range []struct {
		name   string
		zeroAt int // line of the index 0, 0 for none
	}{{"one", 0}, {"early", 1}, {"late", 1500}} {
		for _, ext := range []string{".libsvm", ".libsvm.gz", ".libsvm.zst"} {
			for _, cache := range []string{"", "auto", TempCache} {
				t.Run(c.name+ext+"/cache="+cache, func(t *testing.T) {
					dir, tmp := t.TempDir(), t.TempDir()
					path := filepath.Join(dir, "d"+ext)
					testfiles.WriteNoNote(t, path, zeroText(1600, 7, c.zeroAt))
					want, err := reader.Load(path)
					if err != nil {
						t.Fatal(err)
					}
					var restarts []ZeroRestart
					cfg := Config{Cache: cache, BlockRows: 100, SpillDir: tmp}
					var got *sparsevec.CSR
					err = Run(path, cfg, nil, func(z *ZeroRestart) { restarts = append(restarts, *z) }, func(in *Input) error {
						var err error
						got, err = readPasses(in, 2, 0)
						return err
					})
					if err != nil {
						t.Fatal(err)
					}
					checkRows(t, "Run", got, want)
					switch {
					case c.zeroAt == 0 && len(restarts) != 0:
						t.Errorf("1-based file: restarted %v", restarts)
					case c.zeroAt > 0 && (len(restarts) != 1 || restarts[0] != ZeroRestart{Path: path, Line: c.zeroAt}):
						t.Errorf("restarts %v, want one at %s:%d", restarts, path, c.zeroAt)
					}
					files := testfiles.ListDir(t, dir)
					if cache == "auto" {
						if err := rowcache.Check(path+".cpmcache", path); err != nil {
							t.Errorf("the cache does not match the source read with auto: %v", err)
						}
						m, err := reader.Load(path + ".cpmcache")
						if err != nil {
							t.Fatal(err)
						}
						checkRows(t, "the cache", m, want)
						files = slices.DeleteFunc(files, func(s string) bool { return s == "d"+ext+".cpmcache" })
					}
					if !slices.Equal(files, []string{"d" + ext}) {
						t.Errorf("left in the data directory: %v", files)
					}
					if left := testfiles.ListDir(t, tmp); len(left) > 0 {
						t.Errorf("left in the temporary directory: %v", left)
					}
				})
			}
		}
	}
}

// A run that ends within its first pass, before the index 0, restarts
// after a scan (the line unknown); a 1-based file scanned so does not.
func TestRunZeroBasedEarlyEnd(t *testing.T) {
	for _, zeroAt := range []int{0, 1500} {
		path := filepath.Join(t.TempDir(), "d.libsvm.zst")
		testfiles.WriteNoNote(t, path, zeroText(1600, 3, zeroAt))
		want, err := reader.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		var restarts []ZeroRestart
		var got *sparsevec.CSR
		err = Run(path, Config{BlockRows: 100}, nil, func(z *ZeroRestart) { restarts = append(restarts, *z) }, func(in *Input) error {
			var err error
			got, err = readPasses(in, 1, 2)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		first := &sparsevec.CSR{}
		for r := range 200 {
			first.Append(want.Labels[r], want.Row(r))
		}
		checkRows(t, "the first 2 blocks", got, first)
		switch {
		case zeroAt == 0 && len(restarts) != 0:
			t.Errorf("1-based file: restarted %v", restarts)
		case zeroAt > 0 && (len(restarts) != 1 || restarts[0] != ZeroRestart{Path: path}):
			t.Errorf("restarts %v, want one for %s found by the scan", restarts, path)
		}
	}
}

// Run's errors are those of a read with auto's scan: an error before the
// index 0 whose text depends on the reading (an index above the maximum,
// said as 0-based), one that does not (syntax), and an index 0 under
// ZeroBasedNo, which is not restarted.
func TestRunZeroBasedErrors(t *testing.T) {
	for _, c := range []struct {
		text     string
		opts     []reader.Option
		restarts int
	}{
		{"1 1:1\n1 11:1\n-1 3:1\n1 0:1\n", []reader.Option{reader.WithMaxIndex(10)}, 1},
		{"1 1:1\n1 10:1\n-1 3:1\n1 0:1\n", []reader.Option{reader.WithMaxIndex(10)}, 1},
		{"1 1:1\n1 2:x\n-1 3:1\n1 0:1\n", nil, 1},
		{"1 1:1\n1 2:x\n-1 3:1\n1 4:1\n", nil, 0},
		{"1 1:1\n1 2:1\n-1 3:1\n1 0:1\n", []reader.Option{reader.WithZeroBased(reader.ZeroBasedNo)}, 0},
	} {
		path := filepath.Join(t.TempDir(), "d.libsvm")
		testfiles.WriteNoNote(t, path, []byte(c.text))
		in, err := Open(path, Config{BlockRows: 1}, c.opts...)
		if err != nil {
			t.Fatal(err)
		}
		_, want := readPasses(in, 1, 0)
		in.Close()
		if want == nil {
			t.Fatalf("%q: no error", c.text)
		}
		restarts := 0
		err = Run(path, Config{BlockRows: 1}, c.opts, func(*ZeroRestart) { restarts++ }, func(in *Input) error {
			_, err := readPasses(in, 1, 0)
			return err
		})
		var pe *reader.ParseError
		if err == nil || err.Error() != want.Error() || !errors.As(err, &pe) {
			t.Errorf("%q: Run error %v, want %v", c.text, err, want)
		}
		if restarts != c.restarts {
			t.Errorf("%q: %d restarts, want %d", c.text, restarts, c.restarts)
		}
		if strings.Contains(c.text, "11:1") && !strings.Contains(err.Error(), "0-based index 11") {
			t.Errorf("%q: %v does not say the 0-based index", c.text, err)
		}
	}
}
