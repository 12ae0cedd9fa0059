package shard

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"

	"github.com/polyhedral/cpm/internal/rng"
	"github.com/polyhedral/cpm/sparsevec"
)

// bucketOf returns the bucket, in [0, n), of the row with the given
// ordinal under key: the ordinal-th output of a SplitMix64 generator whose
// state starts at rng.SplitMix64Finalizer(key) (rng.SplitMix64At), mapped
// to [0, n) by the high word of a 64×64-bit product (Lemire), which is
// uniform up to n/2^64. It is a pure function, so the bucket of a row never
// depends on block sizes, reading order or the Go release.
func bucketOf(key, ordinal uint64, n int) int {
	h := rng.SplitMix64At(rng.SplitMix64Finalizer(key), ordinal)
	hi, _ := bits.Mul64(h, uint64(n))
	return int(hi)
}

// subKey derives the key of sub-bucket j of the bucket with key parent.
// The high bit is set so that derived keys never equal a top-level bucket
// index.
func subKey(parent uint64, j int) uint64 {
	return rng.SplitMix64At(parent^0x5bd1e9955bd1e995, uint64(j)) | 1<<63
}

// memBytes is the memory counted for rows rows with nnz nonzeros held as a
// CSR with a permutation: a float32 label, an int row pointer and an int32
// permutation entry per row, a uint32 index and a float32 value per
// nonzero.
func memBytes(rows, nnz int64) int64 { return 16*rows + 8*nnz }

// A bucket file is a temporary, private sequence of rows, each encoded as
//
//	uvarint nnz, label float32 bits (4 bytes little-endian),
//	nnz × uvarint index delta (from 0, then from the previous index),
//	nnz × value float32 bits (4 bytes little-endian),
//	[varint query id, when the input's rows have them]
//
// which reads back bit for bit without parsing text.

// bucket is a bucket file being written, then read.
type bucket struct {
	path      string
	f         *os.File
	w         *bufio.Writer
	buf       []byte
	rows, nnz int64
	qid       bool // rows carry a query id
}

// newBucket creates a hidden bucket file in dir named after the prefix.
func newBucket(dir, prefix string, bufSize int) (*bucket, error) {
	f, err := os.CreateTemp(dir, prefix+"-*")
	if err != nil {
		return nil, fmt.Errorf("shard: creating bucket file: %w", err)
	}
	return &bucket{path: f.Name(), f: f, w: bufio.NewWriterSize(f, bufSize)}, nil
}

// add appends one row; qid is written when b.qid is set.
func (b *bucket) add(label float32, qid int64, x sparsevec.Vector) error {
	buf := b.buf[:0]
	buf = binary.AppendUvarint(buf, uint64(len(x.Idx)))
	buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(label))
	var prev uint32
	for _, j := range x.Idx {
		buf = binary.AppendUvarint(buf, uint64(j-prev))
		prev = j
	}
	for _, v := range x.Val[:len(x.Idx)] {
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
	}
	if b.qid {
		buf = binary.AppendVarint(buf, qid)
	}
	b.buf = buf
	b.rows++
	b.nnz += int64(len(x.Idx))
	if _, err := b.w.Write(buf); err != nil {
		return fmt.Errorf("shard: writing bucket file %s: %w", b.path, err)
	}
	return nil
}

// finish flushes the bucket and rewinds it for reading.
func (b *bucket) finish() error {
	if err := b.w.Flush(); err != nil {
		return fmt.Errorf("shard: writing bucket file %s: %w", b.path, err)
	}
	if _, err := b.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("shard: rewinding bucket file %s: %w", b.path, err)
	}
	b.w = nil
	return nil
}

// remove closes and deletes the bucket file. It may be called more than
// once.
func (b *bucket) remove() {
	if b.f != nil {
		b.f.Close()
		os.Remove(b.path)
		b.f = nil
	}
}

// errBucketCorrupt reports a bucket file that does not hold what was written
// to it (it was changed or truncated behind our back).
var errBucketCorrupt = errors.New("bucket file is corrupt")

// bucketReader reads the rows of a finished bucket.
type bucketReader struct {
	path string
	r    *bufio.Reader
	word [4]byte
	qid  bool
}

func (b *bucket) reader(bufSize int) *bucketReader {
	return &bucketReader{path: b.path, r: bufio.NewReaderSize(b.f, bufSize), qid: b.qid}
}

// next appends the next row to dst (Labels, Idx, Val, Ptr, Dim and, for
// rows with query ids, Qid), which must have Ptr[0] set. It returns io.EOF
// at a clean end of the file.
func (br *bucketReader) next(dst *sparsevec.CSR) error {
	n, err := binary.ReadUvarint(br.r)
	if err == io.EOF {
		return io.EOF
	}
	if err != nil {
		return br.corrupt(err)
	}
	if n > math.MaxUint32 {
		return br.corrupt(fmt.Errorf("row of %d nonzeros", n))
	}
	label, err := br.f32()
	if err != nil {
		return err
	}
	var j uint64
	for range n {
		d, err := binary.ReadUvarint(br.r)
		if err != nil {
			return br.corrupt(err)
		}
		j += d
		if j > math.MaxUint32 {
			return br.corrupt(errors.New("index overflows uint32"))
		}
		dst.Idx = append(dst.Idx, uint32(j))
	}
	for range n {
		v, err := br.f32()
		if err != nil {
			return err
		}
		dst.Val = append(dst.Val, v)
	}
	if br.qid {
		q, err := binary.ReadVarint(br.r)
		if err != nil {
			return br.corrupt(err)
		}
		dst.Qid = append(dst.Qid, q)
	}
	dst.Labels = append(dst.Labels, label)
	dst.Ptr = append(dst.Ptr, len(dst.Idx))
	if n > 0 {
		dst.Dim = max(dst.Dim, int(j)+1)
	}
	return nil
}

func (br *bucketReader) f32() (float32, error) {
	if _, err := io.ReadFull(br.r, br.word[:]); err != nil {
		return 0, br.corrupt(err)
	}
	return math.Float32frombits(binary.LittleEndian.Uint32(br.word[:])), nil
}

func (br *bucketReader) corrupt(err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("shard: reading bucket file %s: %w: %w", br.path, errBucketCorrupt, err)
}
