package columnar

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/reader/internal/core"
)

// fuzzSeed is one named input of a seed corpus.
type fuzzSeed struct {
	name string
	data []byte
}

// TestWriteFuzzCorpus writes the seed corpus of FuzzColumnar to
// testdata/fuzz when CPM_WRITE_FUZZ_CORPUS=1: Arrow files, Arrow streams
// and Parquet files of 12 rows (sampleCSR, batches of 5), uncompressed and
// compressed, each whole, truncated to two thirds and with a byte flipped.
func TestWriteFuzzCorpus(t *testing.T) {
	if os.Getenv("CPM_WRITE_FUZZ_CORPUS") != "1" {
		t.Skip("set CPM_WRITE_FUZZ_CORPUS=1 to rewrite testdata/fuzz")
	}
	var seeds []fuzzSeed
	for _, ext := range []string{".arrow", ".arrows", ".parquet"} {
		m := sampleCSR(testRand(), 12)
		for _, comp := range compressionsOf(ext) {
			p := filepath.Join(t.TempDir(), "x"+ext)
			writeAll(t, p, m, 12, core.WithCompression(comp), core.WithBatchRows(5))
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			name := strings.TrimPrefix(ext, ".") + "-" + comp
			n := len(data)
			flipped := bytes.Clone(data)
			flipped[n/2] ^= 0x55
			seeds = append(seeds,
				fuzzSeed{name, data},
				fuzzSeed{name + "-truncated", data[:n*2/3]},
				fuzzSeed{name + "-flipped", flipped},
			)
		}
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzColumnar")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, s := range seeds {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%s)\n", strconv.Quote(string(s.data)))
		if err := os.WriteFile(filepath.Join(dir, s.name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// compressionsOf lists the codecs of a columnar extension.
func compressionsOf(ext string) []string {
	if ext == ".parquet" {
		return []string{"none", "snappy"}
	}
	return []string{"none", "zstd"}
}
