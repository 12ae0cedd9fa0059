package libsvm

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestWriteFuzzCorpus writes the seed corpus of FuzzScanner to
// testdata/fuzz when CPM_WRITE_FUZZ_CORPUS=1: one text per parse error
// class, and a valid text with qid, comments, a blank line and CRLF.
func TestWriteFuzzCorpus(t *testing.T) {
	if os.Getenv("CPM_WRITE_FUZZ_CORPUS") != "1" {
		t.Skip("set CPM_WRITE_FUZZ_CORPUS=1 to rewrite testdata/fuzz")
	}
	seeds := []struct {
		name string
		data []byte
	}{
		{"valid", []byte("1 1:0.5 3:2\n-1 2:1e3 # c\n\n3 qid:1 1:1\r\n")},
		{"no-label", []byte("3:1 4:2\n")},
		{"index-zero", []byte("1 0:1\n")},
		{"huge-index", []byte("1 4294967295:1 4294967296:1\n")},
		{"unsorted", []byte("1 3:1 2:1\n")},
		{"duplicate", []byte("1 2:1 2:1\n")},
		{"nan-label", []byte("NaN 1:1\n")},
		{"inf-value", []byte("1 1:inf\n")},
		{"overflow", []byte("1e39 1:3.5e38\n")},
		{"bad-qid", []byte("1 qid:x 1:1\n")},
		{"mixed-qid", []byte("1 qid:1 1:1\n\n2 2:1\n")},
		{"zero-based-qid", []byte("1 qid:-3 0:1 4294967294:2\n2 qid:4 0:0.5\n")},
		{"hash-in-token", []byte("1 1:1#c\n")},
		{"binary", []byte("\x00\xff\n\x80")},
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzScanner")
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
