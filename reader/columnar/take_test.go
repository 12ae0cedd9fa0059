package columnar

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"testing"

	"github.com/polyhedral/cpm/reader/internal/core"
	"github.com/polyhedral/cpm/sparsevec"
)

// levelSource is a batchReader over given levels and values, handing out at
// most step levels per ReadBatch (and the values of the levels at maxDef, or
// fewer if short says so).
type levelSource struct {
	def, rep []int16
	vals     []int32
	maxDef   int16
	step     int
	short    bool // hand out one value fewer than the levels at maxDef, once
	l, v     int
}

func (s *levelSource) ReadBatch(n int64, vals []int32, def, rep []int16) (int64, int, error) {
	k := min(int(n), s.step, len(s.def)-s.l)
	copy(def, s.def[s.l:s.l+k])
	copy(rep, s.rep[s.l:s.l+k])
	nv := 0
	for _, d := range s.def[s.l : s.l+k] {
		if d == s.maxDef {
			nv++
		}
	}
	if s.short && nv > 0 {
		nv--
		s.short = false
	}
	nv = min(nv, len(s.vals)-s.v)
	copy(vals, s.vals[s.v:s.v+nv])
	s.l += k
	s.v += nv
	return int64(k), nv, nil
}

func (s *levelSource) HasNext() bool { return s.l < len(s.def) }
func (s *levelSource) Err() error    { return nil }

// takeLevelByLevel is take as a literal reading of the levels, one at a
// time: the reference TestTakeDifferential compares take with.
func takeLevelByLevel[T int32 | float32, D uint32 | float32](c *leafCursor[T], rows int, dst []D, ptr []int) ([]D, []int, int, error) {
	n := 0
	for {
		ok, err := c.fill()
		if err != nil {
			return dst, ptr, n, err
		}
		if !ok {
			return dst, ptr, n, nil
		}
		def, rep := c.def[c.lpos:c.lend], c.rep[c.lpos:c.lend]
		vals := c.vals[:c.vend]
		i := 0
		for ; i < len(def); i++ {
			switch r := rep[i]; {
			case r == 0:
				if n == rows {
					c.lpos += i
					return dst, ptr, n, nil
				}
				n++
				ptr = append(ptr, len(dst))
				c.started = true
			case r != 1 || !c.started:
				return dst, ptr, n, fmt.Errorf("repetition level %d", r)
			}
			d := def[i]
			switch {
			case d == c.lv.maxDef:
				if c.vpos >= len(vals) {
					return dst, ptr, n, errors.New("fewer values than levels")
				}
				dst = append(dst, D(vals[c.vpos]))
				c.vpos++
				ptr[len(ptr)-1] = len(dst)
			case d < 0 || d > c.lv.maxDef:
				return dst, ptr, n, fmt.Errorf("definition level %d", d)
			case d == c.lv.emptyDef:
				if rep[i] != 0 {
					return dst, ptr, n, errors.New("empty list inside a list")
				}
			case d < c.lv.emptyDef:
				return dst, ptr, n, &nullAt{n - 1, nullList}
			case d < c.lv.elemDef:
				return dst, ptr, n, &nullAt{n - 1, nullElem}
			default:
				return dst, ptr, n, &nullAt{n - 1, nullLeaf}
			}
		}
		c.lpos += i
	}
}

// TestTakeDifferential reads random level sequences, valid and not, in
// random batches of rows, with take and with takeLevelByLevel, and wants the
// same rows, values and errors.
func TestTakeDifferential(t *testing.T) {
	r := testRand()
	lv := levels{maxDef: 3, emptyDef: 1, elemDef: 2}
	for trial := range 3000 {
		// Rows of mostly full lists; a few empty or null lists, null
		// elements or leaves, and bad levels where the trial asks.
		bad := trial%3 == 0
		var def, rep []int16
		var vals []int32
		rows := 1 + r.IntN(40)
		for range rows {
			k := r.IntN(30)
			if r.IntN(8) == 0 {
				k = 0
			}
			if k == 0 {
				def, rep = append(def, lv.emptyDef-int16(r.IntN(2)*r.IntN(2))), append(rep, 0)
				continue
			}
			for e := range k {
				d, p := lv.maxDef, int16(min(e, 1))
				if bad && r.IntN(200) == 0 {
					d = int16(r.IntN(6) - 1)
				}
				if bad && r.IntN(200) == 0 {
					p = int16(r.IntN(4) - 1)
				}
				def, rep = append(def, d), append(rep, p)
				if d == lv.maxDef {
					vals = append(vals, int32(r.Uint32()))
				}
			}
		}
		step := 1 + r.IntN(70)
		short := bad && r.IntN(4) == 0
		newCursor := func() *leafCursor[int32] {
			src := &levelSource{def: def, rep: rep, vals: vals, maxDef: lv.maxDef, step: step, short: short}
			return &leafCursor[int32]{rd: src, lv: lv}
		}
		a, b := newCursor(), newCursor()
		for call := 0; ; call++ {
			k := 1 + r.IntN(12)
			gd, gp, gn, gerr := take(a, k, []uint32(nil), []int{0})
			wd, wp, wn, werr := takeLevelByLevel(b, k, []uint32(nil), []int{0})
			if fmt.Sprint(gerr) != fmt.Sprint(werr) || gn != wn {
				t.Fatalf("trial %d call %d: take gives %d rows, %v; level by level %d rows, %v", trial, call, gn, gerr, wn, werr)
			}
			if gerr != nil {
				var g, w *nullAt
				if errors.As(gerr, &g) != errors.As(werr, &w) || (g != nil && *g != *w) {
					t.Fatalf("trial %d call %d: null %v, want %v", trial, call, g, w)
				}
				break
			}
			if !slices.Equal(gd, wd) || !slices.Equal(gp, wp) {
				t.Fatalf("trial %d call %d: take gives %v %v, level by level %v %v", trial, call, gp, gd, wp, wd)
			}
			if gn < k {
				break
			}
		}
	}
}

// TestDetach keeps every block of files of several batches, canonical and
// converted (wider types), with Detach: the blocks must still hold their
// rows after the whole file is read and the reader closed, and Release of
// a detached block must panic.
func TestDetach(t *testing.T) {
	m := sampleCSR(testRand(), 40)
	wide := wideRecord(t, m)
	defer wide.Release()
	for _, ext := range columnarExts {
		for _, converted := range []bool{false, true} {
			path := filepath.Join(t.TempDir(), "x"+ext)
			if converted {
				path = writeRecords(t, ext, wide.Schema(), wide)
			} else {
				writeAll(t, path, m, 7, core.WithBatchRows(7))
			}
			br, err := openBlocks(path, 7)
			if err != nil {
				t.Fatal(err)
			}
			var kept []*sparsevec.CSR
			for {
				blk, err := br.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				br.(core.Detacher).Detach(blk)
				kept = append(kept, blk)
			}
			if err := br.Close(); err != nil {
				t.Fatal(err)
			}
			if got := core.ConcatCSR(kept); !equalCSR(got, m) {
				t.Errorf("%s (converted %v): detached blocks do not hold the rows", ext, converted)
			}
			if !converted && len(kept) < 2 {
				t.Errorf("%s: %d blocks, want several", ext, len(kept))
			}
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s: Release of a detached block did not panic", ext)
					}
				}()
				br.Release(kept[len(kept)-1])
			}()
		}
	}
}
