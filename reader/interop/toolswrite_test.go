package interop_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"github.com/polyhedral/cpm/input"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/sparsevec"
)

// genCase is one variant in gen.mjs's manifest.json.
type genCase struct {
	Name        string `json:"name"`
	Tool        string `json:"tool"`
	Path        string `json:"path"`
	Dir         bool   `json:"dir"`
	Ordered     bool   `json:"ordered"`
	ZeroBased   bool   `json:"zeroBased"`
	Format      string `json:"format"`
	Schema      string `json:"schema"`
	Compression string `json:"compression"`
	Encoding    string `json:"encoding"`
	// Refused, if set, says that cpm must refuse every file of the case
	// with an error of the ErrBadInput class that names the file and
	// contains this text (the missing column, the codec).
	Refused string `json:"refused"`
}

// manifest is gen.mjs's manifest.json.
type manifest struct {
	Tools map[string]string `json:"tools"`
	Cases []genCase         `json:"cases"`
}

// TestToolsWriteCPMReads runs gen.mjs and checks that cpm reads every
// file it writes as the reference rows and trains the reference model on
// them (see the package documentation).
func TestToolsWriteCPMReads(t *testing.T) {
	node := requireNode(t)
	dir := t.TempDir()
	ref := referenceRows()
	refPath := filepath.Join(dir, "reference.libsvm")
	writeCPM(t, refPath, ref)
	want, err := reader.Load(refPath)
	if err != nil {
		t.Fatal(err)
	}
	if d := diffRows(want, ref); d != "" {
		t.Fatalf("%s: cpm's LIBSVM writer and reader: %s", refPath, d)
	}
	rowsPath := filepath.Join(dir, "rows.json")
	writeJSON(t, rowsPath, ref)
	out := filepath.Join(dir, "gen")
	runNode(t, node, "gen.mjs", rowsPath, out)
	b, err := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var man manifest
	if err := json.Unmarshal(b, &man); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	tools := make([]string, 0, len(man.Tools))
	for k := range man.Tools {
		tools = append(tools, k)
	}
	sort.Strings(tools)
	for _, k := range tools {
		t.Logf("writer %s: %s", k, man.Tools[k])
	}
	if len(man.Cases) < 50 {
		t.Fatalf("manifest.json lists %d cases, want the whole matrix (at least 50)", len(man.Cases))
	}

	wantModel := trainBytes(t, want)
	sortedWant := sortedRows(want)
	var sortedModel []byte // trained on the first unordered case only
	for _, c := range man.Cases {
		t.Run(c.Name, func(t *testing.T) {
			t.Logf("%s %s: %s; compression %s; %s", c.Tool, c.Format, c.Schema, c.Compression, c.Encoding)
			if c.Refused != "" {
				checkRefused(t, filepath.Join(out, c.Path), c)
				return
			}
			got := readCase(t, filepath.Join(out, c.Path), c)
			wantRows, wantBytes := want, wantModel
			if !c.Ordered {
				got = sortedRows(got)
				if sortedModel == nil {
					sortedModel = trainBytes(t, sortedWant)
				}
				wantRows, wantBytes = sortedWant, sortedModel
			}
			if d := diffRows(got, wantRows); d != "" {
				t.Fatalf("%s: rows differ from the reference: %s", c.Path, d)
			}
			if !bytes.Equal(trainBytes(t, got), wantBytes) {
				t.Fatalf("%s: the CPM trained on its rows differs from the one trained on %s", c.Path, refPath)
			}
		})
	}
}

// checkRefused checks that cpm refuses every file of the case at path
// with an error of the ErrBadInput class that names the file and contains
// c.Refused.
func checkRefused(t *testing.T, path string, c genCase) {
	t.Helper()
	for _, f := range caseFiles(t, path, c) {
		_, err := reader.Load(f)
		switch {
		case err == nil:
			t.Errorf("%s: read, want an error containing %q", f, c.Refused)
		case !errors.Is(err, reader.ErrBadInput):
			t.Errorf("%s: %v: not of the ErrBadInput class", f, err)
		case !strings.Contains(err.Error(), f) || !strings.Contains(err.Error(), c.Refused):
			t.Errorf("%s: %v: does not name the file and contain %q", f, err, c.Refused)
		default:
			t.Logf("refused: %v", err)
		}
	}
}

// caseFiles returns the file at path, or the Parquet files under the
// directory at path (searched recursively, as Hive partitions nest them)
// in path order.
func caseFiles(t *testing.T, path string, c genCase) []string {
	t.Helper()
	if !c.Dir {
		return []string{path}
	}
	var files []string
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("%s: no .parquet files", path)
	}
	slices.Sort(files)
	t.Logf("%s: %d files", c.Path, len(files))
	return files
}

// readCase reads the file or directory at path with cpm's reader and its
// default options, as a user would: a file with reader.Load and again
// block by block (reader.OpenBlocks, 37 rows a block where the format
// lets the reader choose; LIBSVM text takes another path than Load's
// parallel parser), which must agree; a directory as the commands read
// it (input.Load: its files in path order, _ and . names skipped), which
// must give the rows of its Parquet files read one by one in path order. The defaults take 0-based indices
// as they come: a LIBSVM file that holds an index 0 is read as 0-based,
// and so is a columnar file whose metadata says cpm.index_base = 0.
func readCase(t *testing.T, path string, c genCase) *sparsevec.CSR {
	t.Helper()
	if !c.Dir {
		m, err := reader.Load(path)
		if err != nil {
			t.Fatalf("reader.Load: %v", err)
		}
		if d := diffRows(readBlocks(t, path), m); d != "" {
			t.Fatalf("%s: reader.OpenBlocks and reader.Load differ: %s", path, d)
		}
		return m
	}
	all := &sparsevec.CSR{Ptr: []int{0}}
	for _, f := range caseFiles(t, path, c) {
		all.AppendCSR(readBlocks(t, f))
	}
	dir, _, err := input.Load(path, input.Config{})
	if err != nil {
		t.Fatalf("input.Load of the directory: %v", err)
	}
	if d := diffRows(dir, all); d != "" {
		t.Fatalf("%s: the directory read as one data set (input.Load) differs from its files read one by one in path order: %s", path, d)
	}
	return dir
}

// readBlocks reads the file at path with reader.OpenBlocks.
func readBlocks(t *testing.T, path string) *sparsevec.CSR {
	t.Helper()
	b, err := reader.OpenBlocks(path, 37)
	if err != nil {
		t.Fatalf("reader.OpenBlocks: %v", err)
	}
	m, err := reader.ReadAll(b)
	if err != nil {
		t.Fatalf("reader.OpenBlocks: %v", err)
	}
	return m
}
