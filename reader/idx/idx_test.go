package idx_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/reader/idx"
	"github.com/polyhedral/cpm/reader/libsvm"
	"github.com/polyhedral/cpm/sparsevec"
)

// idxFile builds an idx file: magic, then each header word, then data.
func idxFile(magic uint32, header []uint32, data []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, magic)
	for _, h := range header {
		b = binary.BigEndian.AppendUint32(b, h)
	}
	return append(b, data...)
}

func idxImages(n, rows, cols uint32, pix []byte) []byte {
	return idxFile(0x803, []uint32{n, rows, cols}, pix)
}

func idxLabels(labels ...byte) []byte {
	return idxFile(0x801, []uint32{uint32(len(labels))}, labels)
}

func TestReadIDX(t *testing.T) {
	// Two 2×3 images: index = 1 + r*3 + c.
	pix := []byte{
		0, 255, 0, //
		51, 0, 1,
		0, 0, 0, // second image is all black
		0, 0, 0,
	}
	m, err := idx.Read(bytes.NewReader(idxImages(2, 2, 3, pix)), bytes.NewReader(idxLabels(3, 9)), "img", "lab")
	if err != nil {
		t.Fatal(err)
	}
	if m.Rows() != 2 || m.NNZ() != 3 {
		t.Fatalf("got %d rows, %d nnz; want 2, 3", m.Rows(), m.NNZ())
	}
	if m.Labels[0] != 3 || m.Labels[1] != 9 {
		t.Errorf("labels %v, want [3 9]", m.Labels)
	}
	r0 := m.Row(0)
	wantIdx := []uint32{2, 4, 6}
	wantVal := []float32{1, float32(51) / 255, float32(1) / 255}
	for i := range wantIdx {
		if r0.Idx[i] != wantIdx[i] || r0.Val[i] != wantVal[i] {
			t.Errorf("row 0 nonzero %d = %d:%v, want %d:%v", i, r0.Idx[i], r0.Val[i], wantIdx[i], wantVal[i])
		}
	}
	if m.Row(1).Len() != 0 {
		t.Errorf("all-black image has %d nonzeros, want 0", m.Row(1).Len())
	}
	if m.Dim != 7 {
		t.Errorf("Dim = %d, want 7", m.Dim)
	}
}

func TestReadIDXEmpty(t *testing.T) {
	m, err := idx.Read(bytes.NewReader(idxImages(0, 28, 28, nil)), bytes.NewReader(idxLabels()), "img", "lab")
	if err != nil {
		t.Fatal(err)
	}
	if m.Rows() != 0 || len(m.Ptr) != 1 {
		t.Errorf("got %d rows, Ptr %v; want 0 rows, Ptr [0]", m.Rows(), m.Ptr)
	}
}

func TestReadIDXErrors(t *testing.T) {
	good := idxImages(2, 1, 2, []byte{1, 2, 3, 4})
	tests := []struct {
		name           string
		images, labels []byte
		want           error
		file           string // the file the error must name
		offset         int64
	}{
		{"image magic", idxFile(0x801, []uint32{2, 1, 2}, []byte{1, 2, 3, 4}), idxLabels(1, 2), idx.ErrMagic, "img", 0},
		{"label magic", good, idxFile(0x803, []uint32{2}, []byte{1, 2}), idx.ErrMagic, "lab", 0},
		{"count mismatch", good, idxLabels(1, 2, 3), idx.ErrCount, "lab", 4},
		{"short image header", good[:10], idxLabels(1, 2), idx.ErrTruncated, "img", 10},
		{"short label header", good, idxLabels(1, 2)[:5], idx.ErrTruncated, "lab", 5},
		{"truncated pixels", good[:len(good)-1], idxLabels(1, 2), idx.ErrTruncated, "img", 19},
		{"truncated labels", good, idxLabels(1, 2)[:9], idx.ErrTruncated, "lab", 9},
		{"label 10", good, idxLabels(1, 10), idx.ErrLabel, "lab", 9},
		{"trailing pixels", append(good, 0), idxLabels(1, 2), idx.ErrTrailing, "img", 20},
		{"trailing labels", good, append(idxLabels(1, 2), 0), idx.ErrTrailing, "lab", 10},
		{"too many pixels", idxImages(1, 1025, 1024, nil), idxLabels(1), idx.ErrTooLarge, "img", 8},
		{"too many images", idxImages(idx.MaxItems+1, 28, 28, nil), idxFile(0x801, []uint32{idx.MaxItems + 1}, nil), idx.ErrTooLarge, "img", 4},
		{"huge dims", idxImages(1, 1<<31, 1<<31, nil), idxLabels(1), idx.ErrTooLarge, "img", 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := idx.Read(bytes.NewReader(tt.images), bytes.NewReader(tt.labels), "img", "lab")
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if m != nil {
				t.Errorf("got a result with the error")
			}
			var ie *idx.Error
			if !errors.As(err, &ie) {
				t.Fatalf("err %T is not an *Error", err)
			}
			if ie.Name != tt.file || ie.Offset != tt.offset {
				t.Errorf("error at %s offset %d, want %s offset %d (%v)", ie.Name, ie.Offset, tt.file, tt.offset, err)
			}
			if !strings.HasPrefix(err.Error(), tt.file+": ") {
				t.Errorf("message %q does not start with the file name", err)
			}
		})
	}
}

// A header claiming the largest allowed count over almost no data must fail
// as truncated without allocating for the claimed size.
func TestReadIDXHostileHeader(t *testing.T) {
	n := uint32(idx.MaxItems)
	labels := idxFile(0x801, []uint32{n}, make([]byte, 100))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := idx.Read(bytes.NewReader(idxImages(n, 1024, 1024, nil)), bytes.NewReader(labels), "img", "lab")
	runtime.ReadMemStats(&after)
	if !errors.Is(err, idx.ErrTruncated) {
		t.Fatalf("err = %v, want ErrTruncated", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 16<<20 {
		t.Errorf("allocated %d bytes on a 100-byte input", got)
	}
}

// TestLoadIDXFixture decodes the first five MNIST test images (images
// gzip-compressed, labels plain) and compares them with the rows written by
// the independent generator testdata/mnist/mkfixture.js.
func TestLoadIDXFixture(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "mnist")
	m, err := reader.LoadIDX(filepath.Join(dir, "t10k-5-images-idx3-ubyte.gz"), filepath.Join(dir, "t10k-5-labels-idx1-ubyte"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "t10k-5.pixels.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	r := 0
	for ; sc.Scan(); r++ {
		fields := strings.Fields(sc.Text())
		if r >= m.Rows() {
			t.Fatalf("golden has more than %d rows", m.Rows())
		}
		row := m.Row(r)
		if want := fields[0]; strconv.Itoa(int(m.Labels[r])) != want {
			t.Errorf("row %d: label %v, want %s", r, m.Labels[r], want)
		}
		if row.Len() != len(fields)-1 {
			t.Fatalf("row %d: %d nonzeros, want %d", r, row.Len(), len(fields)-1)
		}
		for i, fld := range fields[1:] {
			is, ps, _ := strings.Cut(fld, ":")
			j, _ := strconv.Atoi(is)
			p, _ := strconv.Atoi(ps)
			if row.Idx[i] != uint32(j) || row.Val[i] != float32(p)/255 {
				t.Fatalf("row %d nonzero %d: %d:%v, want %d:%v", r, i, row.Idx[i], row.Val[i], j, float32(p)/255)
			}
		}
	}
	if r != m.Rows() || r != 5 {
		t.Errorf("golden has %d rows, decoded %d, want 5", r, m.Rows())
	}
}

// TestLoadIDXCompressed checks that gzip and zstd idx files decode like
// plain ones, and that damage to the compressed stream is an error.
func TestLoadIDXCompressed(t *testing.T) {
	dir := t.TempDir()
	pix := []byte{0, 7, 255, 0}
	write := func(name string, data []byte, format string) string {
		t.Helper()
		var buf bytes.Buffer
		switch format {
		case "gz":
			zw := gzip.NewWriter(&buf)
			zw.Write(data)
			zw.Close()
		case "zst":
			zw, _ := zstd.NewWriter(&buf)
			zw.Write(data)
			zw.Close()
		default:
			buf.Write(data)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	plainI := write("i", idxImages(2, 1, 2, pix), "")
	plainL := write("l", idxLabels(5, 6), "")
	gzI := write("i.gz", idxImages(2, 1, 2, pix), "gz")
	gzL := write("l.gz", idxLabels(5, 6), "gz")
	zstI := write("i.zst", idxImages(2, 1, 2, pix), "zst")
	want, err := reader.LoadIDX(plainI, plainL)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range [][2]string{{gzI, gzL}, {zstI, plainL}} {
		got, err := reader.LoadIDX(in[0], in[1])
		if err != nil {
			t.Fatal(err)
		}
		if !idxCSREqual(got, want) {
			t.Errorf("%s, %s: decoded %+v, plain gives %+v", in[0], in[1], got, want)
		}
	}

	// A damaged CRC is caught because Read reads to EOF.
	b, _ := os.ReadFile(gzI)
	b[len(b)-8] ^= 0xff
	bad := filepath.Join(dir, "bad.gz")
	os.WriteFile(bad, b, 0o644)
	if _, err := reader.LoadIDX(bad, gzL); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("damaged gzip: err = %v, want an error naming %s", err, bad)
	}

	// A gzip stream cut short is an error too, not an early end.
	b, _ = os.ReadFile(gzI)
	cut := filepath.Join(dir, "cut.gz")
	os.WriteFile(cut, b[:len(b)-12], 0o644)
	if _, err := reader.LoadIDX(cut, gzL); err == nil {
		t.Error("truncated gzip: no error")
	}

	if _, err := reader.LoadIDX(filepath.Join(dir, "missing"), plainL); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v, want os.ErrNotExist", err)
	}
}

func idxCSREqual(a, b *sparsevec.CSR) bool {
	return a.Dim == b.Dim &&
		slices.Equal(a.Labels, b.Labels) && slices.Equal(a.Ptr, b.Ptr) &&
		slices.Equal(a.Idx, b.Idx) && slices.Equal(a.Val, b.Val)
}

func BenchmarkReadIDX(b *testing.B) {
	const n, side = 1000, 28
	pix := make([]byte, n*side*side)
	for i := range pix {
		if i%5 == 0 {
			pix[i] = byte(i)
		}
	}
	images := idxImages(n, side, side, pix)
	labels := idxLabels(make([]byte, n)...)
	b.SetBytes(int64(len(images)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := idx.Read(bytes.NewReader(images), bytes.NewReader(labels), "img", "lab"); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzReadIDX feeds arbitrary bytes to Read. Decoding must not panic, and
// whatever decodes must be a valid CSR that survives a LIBSVM round trip
// through Writer and Scanner unchanged.
func FuzzReadIDX(f *testing.F) {
	f.Add(idxImages(2, 2, 3, []byte{0, 255, 0, 51, 0, 1, 0, 0, 0, 0, 0, 0}), idxLabels(3, 9))
	f.Add(idxImages(1, 1, 1, []byte{7}), idxLabels(10))
	f.Add(idxImages(0, 0, 0, nil), idxLabels())
	f.Fuzz(func(t *testing.T, images, labels []byte) {
		m, err := idx.Read(bytes.NewReader(images), bytes.NewReader(labels), "img", "lab")
		if err != nil {
			if m != nil {
				t.Fatal("result with an error")
			}
			return
		}
		npix := binary.BigEndian.Uint32(images[8:]) * binary.BigEndian.Uint32(images[12:])
		if len(m.Ptr) != m.Rows()+1 || m.Ptr[m.Rows()] != m.NNZ() {
			t.Fatalf("bad Ptr %v for %d rows, %d nonzeros", m.Ptr, m.Rows(), m.NNZ())
		}
		for r := range m.Rows() {
			x := m.Row(r)
			for i, j := range x.Idx {
				if j < 1 || j > npix || i > 0 && j <= x.Idx[i-1] || !(x.Val[i] > 0 && x.Val[i] <= 1) {
					t.Fatalf("row %d: bad nonzero %d:%v", r, j, x.Val[i])
				}
			}
		}
		var buf bytes.Buffer
		w := libsvm.NewWriter(&buf)
		for r := range m.Rows() {
			if err := w.Write(m.Labels[r], m.Row(r)); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		back := &sparsevec.CSR{}
		s := libsvm.NewScanner(&buf, "fuzz")
		for s.Scan() {
			back.Append(s.Label(), s.Row())
		}
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		if m.Rows() > 0 && !idxCSREqual(back, m) {
			t.Fatalf("round trip changed the data:\n got %+v\nwant %+v", back, m)
		}
	})
}
