package idx

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/polyhedral/cpm/sparsevec"
)

// Magic numbers of the two MNIST idx files: two zero bytes, the element type
// (0x08 = unsigned byte) and the number of dimensions.
const (
	idxImagesMagic = 0x00000803 // ubyte, 3 dimensions: n × rows × cols
	idxLabelsMagic = 0x00000801 // ubyte, 1 dimension: n
)

// Limits on the header of an idx file, checked before anything is allocated
// so that a corrupt or hostile header cannot make Read reserve gigabytes.
const (
	// MaxPixels is the largest rows×cols accepted for one image (MNIST has
	// 28×28 = 784).
	MaxPixels = 1 << 20
	// MaxItems is the largest image or label count accepted (MNIST has
	// 60000 training and 10000 test images).
	MaxItems = 1 << 28
)

// Sentinel errors of the idx decoder. They are returned wrapped in an
// *Error that names the file and the byte offset; test with errors.Is.
var (
	ErrMagic     = errors.New("bad idx magic number")
	ErrCount     = errors.New("image and label counts differ")
	ErrTruncated = errors.New("idx file is truncated")
	ErrTrailing  = errors.New("idx file has data after its last item")
	ErrLabel     = errors.New("idx label is not a digit 0..9")
	ErrTooLarge  = errors.New("idx dimensions exceed the decoder's limits")
)

// Error is a failure to decode an idx file. Offset is the byte offset in
// the decompressed stream where the offending field starts.
type Error struct {
	Name   string // file name as given to Read, or the path given to LoadIDX
	Offset int64
	Err    error // wraps one of the Err sentinels, or an I/O error
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: offset %d: %v", e.Name, e.Offset, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// idxPixelValue[p] is the feature value of pixel p: p/255 rounded to float32.
var idxPixelValue = func() (t [256]float32) {
	for p := range t {
		t[p] = float32(p) / 255
	}
	return t
}()

// Read decodes an MNIST image file and its label file, both in the
// uncompressed idx format of LeCun et al. (http://yann.lecun.com/exdb/mnist/):
//
//	images: uint32 0x00000803, uint32 n, uint32 rows, uint32 cols, n·rows·cols pixels (uint8)
//	labels: uint32 0x00000801, uint32 n, n labels (uint8)
//
// with every integer big-endian. Image i becomes row i of the result with label
// float32(digit) and one nonzero per nonzero pixel: feature index
// 1 + r·cols + c (1-based, as in LIBSVM's mnist files) with value pixel/255.
// Zero pixels are omitted, so an all-black image is an empty row. Dim of the
// result follows CSR.Append: one more than the largest index actually stored.
//
// imagesName and labelsName name the two inputs in errors. Any malformed input
// — a wrong magic number, different counts, a truncated file, bytes after the
// last item, a label above 9, or a header beyond MaxPixels or MaxItems —
// is reported as an *Error wrapping one of the Err sentinels.
//
// Read reads both inputs to EOF (so a gzip reader gets to verify its
// checksum) and does its own buffering; the readers need not be buffered.
// Memory use is the result plus the labels and one image.
func Read(images, labels io.Reader, imagesName, labelsName string) (*sparsevec.CSR, error) {
	img := idxStream{r: bufio.NewReaderSize(images, 256<<10), name: imagesName}
	lab := idxStream{r: labels, name: labelsName}

	var ih [16]byte
	if err := img.readFull(ih[:], "header", -1); err != nil {
		return nil, err
	}
	var lh [8]byte
	if err := lab.readFull(lh[:], "header", -1); err != nil {
		return nil, err
	}
	if m := binary.BigEndian.Uint32(ih[0:]); m != idxImagesMagic {
		return nil, img.errorf(0, "%w: got 0x%08x, want 0x%08x (idx3 unsigned-byte images)", ErrMagic, m, idxImagesMagic)
	}
	if m := binary.BigEndian.Uint32(lh[0:]); m != idxLabelsMagic {
		return nil, lab.errorf(0, "%w: got 0x%08x, want 0x%08x (idx1 unsigned-byte labels)", ErrMagic, m, idxLabelsMagic)
	}
	n := uint64(binary.BigEndian.Uint32(ih[4:]))
	rows := uint64(binary.BigEndian.Uint32(ih[8:]))
	cols := uint64(binary.BigEndian.Uint32(ih[12:]))
	nl := uint64(binary.BigEndian.Uint32(lh[4:]))
	if n > MaxItems {
		return nil, img.errorf(4, "%w: %d images, limit %d", ErrTooLarge, n, MaxItems)
	}
	if rows*cols > MaxPixels { // both < 2³², so the product does not overflow
		return nil, img.errorf(8, "%w: %d×%d pixels per image, limit %d", ErrTooLarge, rows, cols, MaxPixels)
	}
	if nl != n {
		return nil, lab.errorf(4, "%w: %d labels for %d images in %s", ErrCount, nl, n, imagesName)
	}

	// Labels first: they are small, and a bad one fails before the pixels
	// are decoded. Grow the buffer as bytes arrive rather than trusting n.
	var lb bytes.Buffer
	if k, err := io.CopyN(&lb, lab.r, int64(n)); err != nil {
		lab.off += k
		return nil, lab.readError(err, "label", int(k))
	}
	lab.off += int64(n)
	digits := lb.Bytes()
	for i, d := range digits {
		if d > 9 {
			return nil, lab.errorf(8+int64(i), "%w: label %d is %d", ErrLabel, i, d)
		}
	}
	if err := lab.expectEOF(); err != nil {
		return nil, err
	}

	// One image at a time through a reused buffer; the CSR grows as rows are
	// decoded, so a header that overstates n costs nothing until the pixels
	// are really there.
	npix := int(rows * cols)
	pix := make([]byte, npix)
	idx, val := make([]uint32, npix), make([]float32, npix)
	pre := min(int(n), 1<<16)
	m := &sparsevec.CSR{
		Labels: make([]float32, 0, pre),
		Ptr:    make([]int, 0, pre+1),
	}
	for i := range int(n) {
		if err := img.readFull(pix, "image", i); err != nil {
			return nil, err
		}
		k := 0
		for j, p := range pix {
			if p != 0 {
				idx[k] = uint32(j) + 1
				val[k] = idxPixelValue[p]
				k++
			}
		}
		m.Append(float32(digits[i]), sparsevec.Vector{Idx: idx[:k], Val: val[:k]})
	}
	if n == 0 {
		m.Ptr = append(m.Ptr, 0)
	}
	if err := img.expectEOF(); err != nil {
		return nil, err
	}
	return m, nil
}

// idxStream tracks the name and byte offset of one input for error messages.
type idxStream struct {
	r    io.Reader
	name string
	off  int64
}

func (s *idxStream) errorf(off int64, format string, args ...any) error {
	return &Error{Name: s.name, Offset: off, Err: fmt.Errorf(format, args...)}
}

// readFull fills p. what and item (if not negative) name the item being
// read in the error message.
func (s *idxStream) readFull(p []byte, what string, item int) error {
	k, err := io.ReadFull(s.r, p)
	s.off += int64(k)
	if err != nil {
		return s.readError(err, what, item)
	}
	return nil
}

// readError turns a short read into ErrTruncated and anything else into an
// I/O error, both positioned at the current offset. A decompressor's
// complaint about a cut-off stream is kept alongside ErrTruncated.
func (s *idxStream) readError(err error, what string, item int) error {
	if item >= 0 {
		what = fmt.Sprintf("%s %d", what, item)
	}
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return s.errorf(s.off, "%w: end of data in %s", ErrTruncated, what)
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return s.errorf(s.off, "%w: end of data in %s: %w", ErrTruncated, what, err)
	}
	return s.errorf(s.off, "reading %s: %w", what, err)
}

// expectEOF checks that nothing follows the last item. Reading to EOF also
// makes a gzip decoder verify its CRC and length trailer.
func (s *idxStream) expectEOF() error {
	var b [1]byte
	for range 100 {
		k, err := s.r.Read(b[:])
		if k > 0 {
			return s.errorf(s.off, "%w", ErrTrailing)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return s.errorf(s.off, "reading past the last item: %w", err)
		}
	}
	return s.errorf(s.off, "reading past the last item: %w", io.ErrNoProgress)
}
