package libsvm_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/reader/libsvm"
	"github.com/polyhedral/cpm/sparsevec"
)

func wVec(idx []uint32, val []float32) sparsevec.Vector {
	return sparsevec.Vector{Idx: idx, Val: val}
}

func TestWriterFormat(t *testing.T) {
	tests := []struct {
		name  string
		label float32
		x     sparsevec.Vector
		want  string
	}{
		{"empty row", -1, wVec(nil, nil), "-1\n"},
		{"digits", 7, wVec([]uint32{1, 3, 784}, []float32{0.5, 2, 1}), "7 1:0.5 3:2 784:1\n"},
		{"shortest float32", 0.1, wVec([]uint32{10}, []float32{float32(1) / 255}), "0.1 10:0.003921569\n"},
		{"explicit zero and negatives", 1, wVec([]uint32{2, 5}, []float32{0, -3.25}), "1 2:0 5:-3.25\n"},
		{"extremes", 1e-45, wVec([]uint32{4294967295}, []float32{math.MaxFloat32}), "1e-45 4294967295:3.4028235e+38\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			w := libsvm.NewWriter(&buf)
			if err := w.Write(tt.label, tt.x); err != nil {
				t.Fatal(err)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if buf.String() != tt.want {
				t.Errorf("got %q, want %q", buf.String(), tt.want)
			}
		})
	}
}

func TestWriterRejects(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	tests := []struct {
		name  string
		label float32
		x     sparsevec.Vector
		want  error
	}{
		{"NaN label", nan, wVec(nil, nil), reader.ErrNonFinite},
		{"Inf value", 1, wVec([]uint32{1, 2}, []float32{1, -inf}), reader.ErrNonFinite},
		{"index 0", 1, wVec([]uint32{0, 2}, []float32{1, 1}), reader.ErrIndexZero},
		{"descending", 1, wVec([]uint32{3, 2}, []float32{1, 1}), reader.ErrUnsorted},
		{"duplicate", 1, wVec([]uint32{2, 2}, []float32{1, 1}), reader.ErrDuplicate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			w := libsvm.NewWriter(&buf)
			w.Write(1, wVec([]uint32{1}, []float32{1}))
			err := w.Write(tt.label, tt.x)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "row 1: ") {
				t.Errorf("error %q does not name row 1", err)
			}
			w.Flush()
			if buf.String() != "1 1:1\n" {
				t.Errorf("output %q, want only the good row", buf.String())
			}
		})
	}
}

// TestWriterRoundTrip writes random rows, including subnormal, huge and
// negative values, and checks that parsing the text gives back every float32
// bit for bit.
func TestWriterRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	want := writerRandomCSR(rng, 500)
	var buf bytes.Buffer
	w := libsvm.NewWriter(&buf)
	for r := range want.Rows() {
		if err := w.Write(want.Labels[r], want.Row(r)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	got, err := parseLIBSVMForTest(buf.String())
	if err != nil {
		t.Fatal(err)
	}
	if !idxCSREqualBits(got, want) {
		t.Error("round trip through parseLIBSVMForTest changed the data")
	}

	// The same through the package's own Scanner.
	got = &sparsevec.CSR{}
	s := libsvm.NewScanner(&buf, "roundtrip")
	for s.Scan() {
		got.Append(s.Label(), s.Row())
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if !idxCSREqualBits(got, want) {
		t.Error("round trip through Scanner changed the data")
	}
}

func TestWriterAllocs(t *testing.T) {
	w := libsvm.NewWriter(io.Discard)
	idx := make([]uint32, 200)
	val := make([]float32, 200)
	for i := range idx {
		idx[i] = uint32(3*i + 1)
		val[i] = float32(i) / 7
	}
	x := wVec(idx, val)
	if n := testing.AllocsPerRun(100, func() { w.Write(-1, x) }); n != 0 {
		t.Errorf("Write allocates %v times per row, want 0", n)
	}
}

// writerRandomCSR returns n rows with random labels and values drawn from several
// scales, so that the shortest decimal forms vary in length and exponent.
func writerRandomCSR(rng *rand.Rand, n int) *sparsevec.CSR {
	m := &sparsevec.CSR{}
	var x sparsevec.Vector
	for range n {
		x.Idx, x.Val = x.Idx[:0], x.Val[:0]
		j := uint32(0)
		for range rng.IntN(30) {
			j += 1 + uint32(rng.IntN(1000))
			x.Idx = append(x.Idx, j)
			x.Val = append(x.Val, writerRandomFloat32(rng))
		}
		m.Append(writerRandomFloat32(rng), x)
	}
	return m
}

func writerRandomFloat32(rng *rand.Rand) float32 {
	switch rng.IntN(4) {
	case 0: // any finite bit pattern, subnormals included
		for {
			if v := math.Float32frombits(rng.Uint32()); !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) {
				return v
			}
		}
	case 1:
		return float32(rng.IntN(10))
	case 2:
		return float32(rng.IntN(256)) / 255
	default:
		return float32(rng.NormFloat64())
	}
}

// parseLIBSVMForTest is a minimal, slow LIBSVM parser for checking Writer
// output independently of the package's own Scanner.
func parseLIBSVMForTest(text string) (*sparsevec.CSR, error) {
	m := &sparsevec.CSR{}
	for ln, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		f := strings.Split(line, " ")
		label, err := strconv.ParseFloat(f[0], 32)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", ln+1, err)
		}
		var x sparsevec.Vector
		for _, p := range f[1:] {
			is, vs, ok := strings.Cut(p, ":")
			j, err1 := strconv.ParseUint(is, 10, 32)
			v, err2 := strconv.ParseFloat(vs, 32)
			if !ok || err1 != nil || err2 != nil {
				return nil, fmt.Errorf("line %d: bad pair %q", ln+1, p)
			}
			x.Idx = append(x.Idx, uint32(j))
			x.Val = append(x.Val, float32(v))
		}
		m.Append(float32(label), x)
	}
	return m, nil
}

// idxCSREqualBits compares two CSRs, values by their bits.
func idxCSREqualBits(a, b *sparsevec.CSR) bool {
	if a.Rows() != b.Rows() || a.NNZ() != b.NNZ() || a.Dim != b.Dim {
		return false
	}
	bits := func(u, v []float32) bool {
		for i := range u {
			if math.Float32bits(u[i]) != math.Float32bits(v[i]) {
				return false
			}
		}
		return true
	}
	for r := range a.Ptr {
		if a.Ptr[r] != b.Ptr[r] {
			return false
		}
	}
	for i := range a.Idx {
		if a.Idx[i] != b.Idx[i] {
			return false
		}
	}
	return bits(a.Labels, b.Labels) && bits(a.Val, b.Val)
}

func TestWriterCreateCompressed(t *testing.T) {
	payload := bytes.Repeat([]byte("1 3:0.5 17:0.25 784:1\n-1 2:0.003921569\n"), 2000)
	tests := []struct {
		name   string
		decode func(io.Reader) ([]byte, error)
	}{
		{"out.libsvm", io.ReadAll},
		{"out", io.ReadAll},
		{"out.zst", func(r io.Reader) ([]byte, error) {
			d, err := zstd.NewReader(r)
			if err != nil {
				return nil, err
			}
			defer d.Close()
			return io.ReadAll(d)
		}},
		{"OUT.ZST", nil}, // same decoder as .zst, set below
		{"out.gz", func(r io.Reader) ([]byte, error) {
			d, err := gzip.NewReader(r)
			if err != nil {
				return nil, err
			}
			return io.ReadAll(d)
		}},
	}
	tests[3].decode = tests[2].decode
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, tt.name)
			out, err := reader.CreateCompressed(path)
			if err != nil {
				t.Fatal(err)
			}
			defer out.Abort()
			for i := 0; i < len(payload); i += 1000 {
				if _, err := out.Write(payload[i:min(i+1000, len(payload))]); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("destination exists before Close: %v", err)
			}
			if err := out.Close(); err != nil {
				t.Fatal(err)
			}
			out.Abort() // no-op after Close
			if err := out.Close(); !errors.Is(err, os.ErrClosed) {
				t.Errorf("second Close: %v, want os.ErrClosed", err)
			}
			if _, err := out.Write([]byte("x")); !errors.Is(err, os.ErrClosed) {
				t.Errorf("Write after Close: %v, want os.ErrClosed", err)
			}
			onlyFile(t, dir, tt.name)
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Size() != out.Written() {
				t.Errorf("Written() = %d, file has %d bytes", out.Written(), fi.Size())
			}
			if fi.Mode().Perm() != 0o644 {
				t.Errorf("mode %v, want 0644", fi.Mode().Perm())
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got, err := tt.decode(f)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, payload) {
				t.Errorf("decoded %d bytes, want the %d written", len(got), len(payload))
			}
		})
	}
}

// TestWriterCreateCompressedAbort checks that an aborted output leaves an existing
// destination untouched and no temporary file behind.
func TestWriterCreateCompressedAbort(t *testing.T) {
	for _, name := range []string{"a.libsvm", "a.zst", "a.gz"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
				t.Fatal(err)
			}
			out, err := reader.CreateCompressed(path)
			if err != nil {
				t.Fatal(err)
			}
			out.Write(bytes.Repeat([]byte("1 1:1\n"), 100000))
			out.Abort()
			out.Abort()
			if err := out.Close(); !errors.Is(err, os.ErrClosed) {
				t.Errorf("Close after Abort: %v, want os.ErrClosed", err)
			}
			onlyFile(t, dir, name)
			if b, _ := os.ReadFile(path); string(b) != "old" {
				t.Errorf("destination changed to %d bytes", len(b))
			}
		})
	}
}

func TestWriterCreateCompressedErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := reader.CreateCompressed(filepath.Join(dir, "x.bz2"))
	if !errors.Is(err, reader.ErrNoBzip2Writer) {
		t.Errorf(".bz2: err = %v, want ErrNoBzip2Writer", err)
	}
	onlyFile(t, dir, "")
	if _, err := reader.CreateCompressed(filepath.Join(dir, "no", "such", "dir.zst")); err == nil {
		t.Error("missing directory: no error")
	}
}

// onlyFile fails unless dir holds exactly the file name (no file if name is "").
func onlyFile(t *testing.T, dir, name string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names, want []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if name != "" {
		want = []string{name}
	}
	if !slices.Equal(names, want) {
		t.Errorf("directory holds %q, want %q", names, want)
	}
}

func ExampleWriter() {
	w := libsvm.NewWriter(os.Stdout)
	w.Write(1, sparsevec.Vector{Idx: []uint32{3, 10}, Val: []float32{0.5, float32(1) / 3}})
	w.Write(-1, sparsevec.Vector{})
	w.Flush()
	// Output:
	// 1 3:0.5 10:0.33333334
	// -1
}
