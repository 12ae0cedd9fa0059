package interop_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/polyhedral/cpm/learner"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/sgd"
	"github.com/polyhedral/cpm/sparsevec"
)

// The reference data set: rows × features, labels ±1.
const (
	nRows     = 200
	nFeatures = 30
	dataSeed  = 2026
	trainSeed = 7
)

// scriptsDir is scripts/interop, relative to this package's directory.
const scriptsDir = "../../scripts/interop"

// nodeTimeout bounds one run of gen.mjs or read.mjs.
const nodeTimeout = 2 * time.Minute

// requireNode returns the path of node when node, npm and
// scripts/interop/node_modules are all there. Otherwise the test skips,
// or fails when the environment variable CPM_INTEROP is set (CI sets it:
// there a missing tool is an error, not a reason to skip).
func requireNode(t *testing.T) string {
	t.Helper()
	var missing []string
	node, err := exec.LookPath("node")
	if err != nil {
		missing = append(missing, "node is not on PATH")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		missing = append(missing, "npm is not on PATH")
	}
	if _, err := os.Stat(filepath.Join(scriptsDir, "node_modules")); err != nil {
		missing = append(missing, "scripts/interop/node_modules is missing (run: cd scripts/interop && npm ci)")
	}
	if len(missing) == 0 {
		return node
	}
	msg := "interop test needs node, npm and the pinned packages: " + strings.Join(missing, "; ")
	if os.Getenv("CPM_INTEROP") != "" {
		t.Fatalf("CPM_INTEROP=%s: %s", os.Getenv("CPM_INTEROP"), msg)
	}
	t.Skip(msg + " (set CPM_INTEROP=1 to make this a failure)")
	return ""
}

// runNode runs node script args in scripts/interop and returns its
// standard output; a failure is fatal, with its standard error.
func runNode(t *testing.T, node, script string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), nodeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
	cmd.Dir = scriptsDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\n%s", script, err, stderr.Bytes())
	}
	t.Logf("node %s: %.2fs %s", script, time.Since(start).Seconds(), strings.TrimSpace(stderr.String()))
	return stdout.Bytes()
}

// referenceRows returns the seeded data set: nRows rows over features
// 1..nFeatures, each feature present with probability 0.4 and feature
// r%nFeatures+1 always (so that every feature occurs), row 7 empty, values
// float32 in [-2, 2) without zeros, every 17th row scaled by 1e-5 (values
// printed in exponent form), label +1 where the first five features sum
// to more than 0 and -1 elsewhere.
func referenceRows() *sparsevec.CSR {
	rng := rand.New(rand.NewPCG(dataSeed, 1))
	m := &sparsevec.CSR{Ptr: []int{0}}
	var x sparsevec.Vector
	for r := range nRows {
		x.Idx, x.Val = x.Idx[:0], x.Val[:0]
		var sum float32
		for j := 1; j <= nFeatures && r != 7; j++ {
			if rng.Float64() >= 0.4 && j != r%nFeatures+1 {
				continue
			}
			v := float32(rng.Float64()*4 - 2)
			if v == 0 {
				v = 0.5
			}
			if r%17 == 0 {
				v *= 1e-5
			}
			if j <= 5 {
				sum += v
			}
			x.Idx = append(x.Idx, uint32(j))
			x.Val = append(x.Val, v)
		}
		y := float32(-1)
		if sum > 0 {
			y = 1
		}
		m.Append(y, x)
	}
	return m
}

// jsonRows is the ROWS.json of gen.mjs.
type jsonRows struct {
	Rows []struct {
		Label float64   `json:"label"`
		Idx   []uint32  `json:"idx"`
		Val   []float64 `json:"val"`
	} `json:"rows"`
	Features int `json:"features"`
}

// writeJSON writes m as gen.mjs's ROWS.json: every float32 as the float64
// of equal value, which encoding/json prints so that it reads back exactly.
func writeJSON(t *testing.T, path string, m *sparsevec.CSR) {
	t.Helper()
	var out jsonRows
	out.Features = nFeatures
	out.Rows = make([]struct {
		Label float64   `json:"label"`
		Idx   []uint32  `json:"idx"`
		Val   []float64 `json:"val"`
	}, m.Rows())
	for r := range m.Rows() {
		x := m.Row(r)
		out.Rows[r].Label = float64(m.Labels[r])
		out.Rows[r].Idx = append([]uint32{}, x.Idx...)
		out.Rows[r].Val = make([]float64, len(x.Val))
		for k, v := range x.Val {
			out.Rows[r].Val[k] = float64(v)
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeCPM writes m to path with cpm's writer for its extension.
func writeCPM(t *testing.T, path string, m *sparsevec.CSR, opts ...reader.Option) {
	t.Helper()
	w, err := reader.CreateBlocks(path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if err := w.Write(m); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// trainBytes trains a small CPM on m (K = 2, 3000 steps, fixed seed, one
// worker, no scaling) and returns its model file.
func trainBytes(t *testing.T, m *sparsevec.CSR) []byte {
	t.Helper()
	spec := learner.Spec{Name: learner.CPM, Config: &learner.CPMConfig{Config: sgd.Config{K: 2, Iterations: 3000, Workers: 1}}}
	mod, _, err := learner.Train(t.Context(), spec.WithSeed(trainSeed), m)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := model.Write(&buf, mod); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// diffRows returns "" when got holds exactly want's rows (labels, indices
// and the bits of every value) and otherwise the first difference.
func diffRows(got, want *sparsevec.CSR) string {
	if got.Rows() != want.Rows() {
		return fmt.Sprintf("%d rows, want %d", got.Rows(), want.Rows())
	}
	for r := range want.Rows() {
		if d := diffRow(r, got.Labels[r], got.Row(r), want.Labels[r], want.Row(r)); d != "" {
			return d
		}
	}
	return ""
}

// diffRow compares row r of two data sets; "" if they are equal.
func diffRow(r int, gy float32, g sparsevec.Vector, wy float32, w sparsevec.Vector) string {
	if math.Float32bits(gy) != math.Float32bits(wy) {
		return fmt.Sprintf("row %d: label %v, want %v", r+1, gy, wy)
	}
	if len(g.Idx) != len(w.Idx) {
		return fmt.Sprintf("row %d: %d nonzeros %v, want %d %v", r+1, len(g.Idx), g.Idx, len(w.Idx), w.Idx)
	}
	for k := range w.Idx {
		if g.Idx[k] != w.Idx[k] || math.Float32bits(g.Val[k]) != math.Float32bits(w.Val[k]) {
			return fmt.Sprintf("row %d, nonzero %d: %d:%v, want %d:%v", r+1, k+1, g.Idx[k], g.Val[k], w.Idx[k], w.Val[k])
		}
	}
	return ""
}

// sortedRows returns m's rows in a canonical order (by label, then
// indices, then values), to compare data sets whose row order is not set.
func sortedRows(m *sparsevec.CSR) *sparsevec.CSR {
	perm := make([]int32, m.Rows())
	for i := range perm {
		perm[i] = int32(i)
	}
	slices.SortStableFunc(perm, func(a, b int32) int {
		if c := cmp.Compare(m.Labels[a], m.Labels[b]); c != 0 {
			return c
		}
		x, y := m.Row(int(a)), m.Row(int(b))
		if c := slices.Compare(x.Idx, y.Idx); c != 0 {
			return c
		}
		return slices.Compare(x.Val, y.Val)
	})
	return m.Permute(perm)
}
