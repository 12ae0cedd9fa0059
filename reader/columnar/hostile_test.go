package columnar

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/reader/internal/core"
)

// A Parquet data page of a column with definition levels (the list leaves)
// whose dictionary indices reach past the dictionary: parquet/file's
// dictionary decoder sizes a slice by the largest index, so this 1.7 KB
// file (found by FuzzColumnar) made it allocate and clear gigabytes. The
// file also has a broken page header in a later column, which colguard.CheckPages
// now refuses first, when the row group is opened; the dictionary index
// check itself is TestCheckedPagesDictionaryIndices.
func TestParquetDictionaryIndexBomb(t *testing.T) {
	defer func(n int64) { allocFloor = n }(allocFloor)
	allocFloor = 16 << 20
	checkBomb(t, "parquet-dict-index-2e31", "page header at byte 362")
}

// checkBomb reads the FuzzColumnar corpus file name and checks that it is
// refused with ErrCorrupt and an error containing want, having allocated
// at most 32 MiB.
func checkBomb(t *testing.T, name, want string) {
	t.Helper()
	data := readCorpusFile(t, filepath.Join("testdata", "fuzz", "FuzzColumnar", name))
	checkBombFile(t, writeTempFile(t, "bomb.parquet", data), want)
}

// checkBombFile checks that reading path fails with ErrCorrupt saying
// want, having allocated at most 32 MiB.
func checkBombFile(t *testing.T, path, want string) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, err := readAllBlocks(t, path)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, core.ErrCorrupt) || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want ErrCorrupt saying %q", err, want)
	}
	if a := after.TotalAlloc - before.TotalAlloc; a > 32<<20 {
		t.Errorf("reading allocated %d MiB", a>>20)
	}
}

// A compressed Arrow IPC buffer whose zstd frame declares a window or a
// content size far above the buffer's uncompressed length is refused
// before arrow's streaming zstd decoder allocates that window: measured
// without the check, a 500 MB content size made it allocate 477 MiB and a
// 2^28-byte window 256 MiB.
func TestArrowZstdWindowBomb(t *testing.T) {
	defer func(n int64) { allocFloor = n }(allocFloor)
	allocFloor = 16 << 20
	magic := []byte{0x28, 0xb5, 0x2f, 0xfd}
	m := sampleCSR(testRand(), 60)
	for _, ext := range []string{".arrow", ".arrows"} {
		src := filepath.Join(t.TempDir(), "src"+ext)
		writeAll(t, src, m, 60, core.WithCompression("zstd"), core.WithBatchRows(16))
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		at := bytes.Index(data, magic)
		if at < 8 {
			t.Fatalf("%s: no zstd frame", ext)
		}
		uncomp := binary.LittleEndian.Uint64(data[at-8:])
		for _, tc := range []struct {
			name string
			hdr  []byte // frame header replacing the first buffer's
			want string
		}{
			{"window", append(magic, 0x00, 18<<3), fmt.Sprintf("window of 268435456 bytes for %d bytes of data", uncomp)},
			{"content size", binary.LittleEndian.AppendUint64(append(magic, 0xe0), 500e6), fmt.Sprintf("content size 500000000, over the %d bytes declared", uncomp)},
		} {
			t.Run(ext+"/"+tc.name, func(t *testing.T) {
				bad := bytes.Clone(data)
				copy(bad[at:], tc.hdr)
				checkBombFile(t, writeTempFile(t, "bomb"+ext, bad), fmt.Sprintf("record batch 1: corrupt input: buffer 1: zstd frame at byte %d: %s", at, tc.want))
			})
		}
	}
}

// A Parquet page header claiming 1.9 GB of compressed bytes in a 3.4 KB
// file is refused by colguard.CheckPages before the library's page reader grows a
// buffer to that size outside any allocator: this file (found by a
// 10-minute FuzzColumnar run) made it clear 1.9 GB and take 30 s.
func TestParquetPageSizeBomb(t *testing.T) {
	checkBomb(t, "parquet-page-size-1.9e9", "1876934494 bytes of body, but the column chunk ends")
}

// A page header cut by the end of its column chunk is refused by
// colguard.CheckPages: the library's buffered reader then hands its page reader
// stale buffer bytes instead of a short view, which it parsed as headers
// of unknown type in a loop, allocating each time, so this 2.9 KB file
// (found by an 11-minute FuzzColumnar run) made it hold over 4 GB and die
// out of memory.
func TestParquetStaleHeaderBomb(t *testing.T) {
	defer func(n int64) { allocFloor = n }(allocFloor)
	allocFloor = 16 << 20
	checkBomb(t, "parquet-stale-header-loop", "page header at byte 1132: page header runs past")
}

// readCorpusFile returns the input of a "go test fuzz v1" file holding one
// []byte.
func readCorpusFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lit, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "go test fuzz v1\n[]byte(")
	if !ok || !strings.HasSuffix(lit, ")") {
		t.Fatalf("%s: not a go test fuzz v1 []byte", path)
	}
	s, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
	if err != nil {
		t.Fatal(err)
	}
	return []byte(s)
}
