package interop_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"testing"

	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/sparsevec"
)

// readRow is one row as read.mjs prints it: [label, [[index, value], ...]].
type readRow struct {
	Label    float64
	Features [][2]float64
}

// UnmarshalJSON reads [label, [[index, value], ...]].
func (r *readRow) UnmarshalJSON(b []byte) error {
	var raw [2]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if err := json.Unmarshal(raw[0], &r.Label); err != nil {
		return err
	}
	return json.Unmarshal(raw[1], &r.Features)
}

// readLine is one line of read.mjs's output: one file read by one tool.
type readLine struct {
	File    string    `json:"file"`
	Reader  string    `json:"reader"`
	Version string    `json:"version"`
	Error   string    `json:"error"`
	Rows    []readRow `json:"rows"`
}

// cpmOutputs are the files TestCPMWritesToolsRead writes: every
// compression cpm convert offers for Parquet and Arrow IPC.
var cpmOutputs = []struct {
	name, compression string
	pages             int // Parquet data page version; 0: the writer's default (1)
}{
	{"cpm-zstd.parquet", "zstd", 0},
	{"cpm-snappy.parquet", "snappy", 0},
	{"cpm-none.parquet", "none", 0},
	{"cpm-zstd-v2.parquet", "zstd", 2},
	{"cpm-zstd.arrow", "zstd", 0},
	{"cpm-lz4.arrow", "lz4", 0},
	{"cpm-none.arrow", "none", 0},
	{"cpm-zstd.arrows", "zstd", 0},
	{"cpm-lz4.arrows", "lz4", 0},
	{"cpm-none.arrows", "none", 0},
}

// minReaders is the fewest independent tools that must read each file.
const minReaders = 2

// TestCPMWritesToolsRead writes the reference rows with cpm's writers and
// checks that every reader of read.mjs reads exactly those rows from each
// file (see the package documentation).
func TestCPMWritesToolsRead(t *testing.T) {
	node := requireNode(t)
	dir := t.TempDir()
	ref := referenceRows()
	var paths []string
	for _, o := range cpmOutputs {
		p := filepath.Join(dir, o.name)
		// Batches of 64 rows: several record batches and row groups.
		opts := []reader.Option{reader.WithCompression(o.compression), reader.WithBatchRows(64)}
		if o.pages != 0 {
			opts = append(opts, reader.WithParquetPageVersion(o.pages))
		}
		writeCPM(t, p, ref, opts...)
		paths = append(paths, p)
	}
	out := runNode(t, node, "read.mjs", paths...)
	byFile := map[string][]readLine{}
	versions := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var l readLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("read.mjs output: %v", err)
		}
		versions[l.Reader] = l.Version
		byFile[filepath.Base(l.File)] = append(byFile[filepath.Base(l.File)], l)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read.mjs output: %v", err)
	}
	names := make([]string, 0, len(versions))
	for k := range versions {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		t.Logf("reader %s: %s", k, versions[k])
	}
	for _, o := range cpmOutputs {
		t.Run(o.name, func(t *testing.T) {
			lines := byFile[o.name]
			if len(lines) < minReaders {
				t.Fatalf("read.mjs read %s with %d tools, want at least %d", o.name, len(lines), minReaders)
			}
			for _, l := range lines {
				t.Run(l.Reader, func(t *testing.T) {
					if l.Error != "" {
						t.Fatalf("%s (%s) cannot read %s: %s", l.Reader, l.Version, o.name, l.Error)
					}
					if d := diffRead(l.Rows, ref); d != "" {
						t.Fatalf("%s (%s) read %s: %s", l.Reader, l.Version, o.name, d)
					}
				})
			}
		})
	}
}

// diffRead compares the rows a tool read with the rows cpm wrote; "" if
// they are equal: each float32 label and value cpm wrote must come back
// as the float64 of equal value.
func diffRead(got []readRow, want *sparsevec.CSR) string {
	if len(got) != want.Rows() {
		return fmt.Sprintf("%d rows, want %d", len(got), want.Rows())
	}
	for r, g := range got {
		w := want.Row(r)
		if g.Label != float64(want.Labels[r]) {
			return fmt.Sprintf("row %d: label %v, want %v", r+1, g.Label, want.Labels[r])
		}
		if len(g.Features) != len(w.Idx) {
			return fmt.Sprintf("row %d: %d nonzeros, want %d", r+1, len(g.Features), len(w.Idx))
		}
		for k, f := range g.Features {
			if f[0] != float64(w.Idx[k]) || f[1] != float64(w.Val[k]) {
				return fmt.Sprintf("row %d, nonzero %d: %v:%v, want %d:%v", r+1, k+1, f[0], f[1], w.Idx[k], w.Val[k])
			}
		}
	}
	return ""
}
