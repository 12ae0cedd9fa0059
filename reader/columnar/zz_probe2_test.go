package columnar

import (
	"path/filepath"
	"testing"
)

func TestZZProbe2(t *testing.T) {
	files, _ := filepath.Glob("/tmp/h1files/pl*")
	for _, p := range files {
		got, _, err := readAllBlocks(t, p)
		rows := 0
		if got != nil {
			rows = got.Rows()
		}
		t.Logf("%s: rows=%d err=%v", filepath.Base(p), rows, err)
	}
}
