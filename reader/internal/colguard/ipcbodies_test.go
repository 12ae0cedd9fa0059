package colguard

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// zstdArrowFile returns an Arrow IPC file of one float32 column holding
// 0, 1, ..., rows-1, in record batches of batch rows, its buffers
// compressed with zstd.
func zstdArrowFile(t *testing.T, rows, batch int) []byte {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Float32}}, nil)
	var buf bytes.Buffer
	w, err := ipc.NewFileWriter(&buf, ipc.WithSchema(schema), ipc.WithZstd())
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewFloat32Builder(memory.DefaultAllocator)
	defer b.Release()
	for lo := 0; lo < rows; lo += batch {
		for i := lo; i < min(lo+batch, rows); i++ {
			b.Append(float32(i))
		}
		col := b.NewArray()
		rec := array.NewRecord(schema, []arrow.Array{col}, int64(col.Len()))
		err := w.Write(rec)
		rec.Release()
		col.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestCheckIPCBody checks the buffer list of a real record batch, altered:
// a buffer outside the body and an uncompressed length over the limit are
// refused; a buffer stored uncompressed (length -1) is not looked into.
func TestCheckIPCBody(t *testing.T) {
	data := zstdArrowFile(t, 40, 16)
	_, records, err := CheckFooter(bytes.NewReader(data), int64(len(data)))
	if err != nil || len(records) != 3 {
		t.Fatalf("CheckFooter: %d record batches, %v", len(records), err)
	}
	blk := records[0]
	meta := FB(data[blk.Off+8 : blk.Off+blk.Meta]) // after the continuation marker and length
	root, _ := meta.Root()
	p, _ := meta.Field(root, 2)
	rb, _ := meta.Deref(p)
	start, n, err := meta.Vector(rb, 2, 16)
	if err != nil || n < 2 {
		t.Fatalf("buffers: %d, %v", n, err)
	}
	buf1 := blk.Off + 8 + start + 16                       // buffer 1's {offset, length} in the file
	rel1 := int64(binary.LittleEndian.Uint64(data[buf1:])) // in the body
	off1 := blk.Off + blk.Meta + rel1
	const limit = 1 << 20
	for _, tc := range []struct {
		name  string
		at    int64 // where to write
		value int64
		want  string
	}{
		{"as written", 0, 0, ""},
		{"buffer past the body", buf1 + 8, blk.Body - rel1 + 1, fmt.Sprintf("buffer 1 at byte %d, %d bytes long, outside the %d-byte message body", rel1, blk.Body-rel1+1, blk.Body)},
		{"uncompressed length over the limit", off1, limit + 1, "declares 1048577 bytes uncompressed, over the 1048576-byte limit"},
		{"stored uncompressed", off1, -1, ""},
	} {
		b := bytes.Clone(data)
		if tc.at > 0 {
			binary.LittleEndian.PutUint64(b[tc.at:], uint64(tc.value))
		}
		var w WindowReader
		if err := CheckFileMessage(bytes.NewReader(b), blk, &w, limit); !errSays(err, tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}
