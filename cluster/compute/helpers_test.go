package compute_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/polyhedral/cpm/cluster"
	"github.com/polyhedral/cpm/cluster/compute"
	"github.com/polyhedral/cpm/learner"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/sparsevec"
)

// load reads a data set of testdata/uci.
func load(t testing.TB, name string) *sparsevec.CSR {
	t.Helper()
	data, err := reader.Load(filepath.Join("..", "..", "testdata", "uci", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// writeData writes data with compute.WriteData to a new file and returns
// its path and the SHA-256 of its bytes (the digest PutData gives it).
func writeData(t testing.TB, data *sparsevec.CSR) (path, digest string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "rows.cpmcache")
	if err := compute.WriteData(path, data); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return path, hex.EncodeToString(sum[:])
}

// store stands in for a worker's data function: it serves the files
// written by add and counts the calls per digest.
type store struct {
	t     testing.TB
	mu    sync.Mutex
	paths map[string]string
	calls map[string]int
}

func newStore(t testing.TB) *store {
	return &store{t: t, paths: map[string]string{}, calls: map[string]int{}}
}

// add writes data with WriteData and returns its digest.
func (s *store) add(data *sparsevec.CSR) string {
	s.t.Helper()
	p, d := writeData(s.t, data)
	s.mu.Lock()
	s.paths[d] = p
	s.mu.Unlock()
	return d
}

// fetch is the data function Execute takes.
func (s *store) fetch(ctx context.Context, digest string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[digest]++
	p, ok := s.paths[digest]
	if !ok {
		return "", fmt.Errorf("data %s: %w", digest, cluster.ErrDataNotFound)
	}
	return p, nil
}

func (s *store) count(digest string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[digest]
}

// flagsOf returns learner flags at their defaults with the given
// name, value pairs set, as cpm's command line would set them.
func flagsOf(t testing.TB, kv ...string) *learner.Flags {
	t.Helper()
	f := learner.NewFlags()
	for i := 0; i < len(kv); i += 2 {
		if err := f.Set(kv[i], kv[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// buildSpec builds the spec of learner name as cpm builds it from its
// command line: flags, then the label, then the seed.
func buildSpec(t testing.TB, name string, f *learner.Flags, label *float32, seed uint64) learner.Spec {
	t.Helper()
	s, err := learner.Build(name, f)
	if err != nil {
		t.Fatal(err)
	}
	if label != nil {
		v := *label
		s.Label = &v
	}
	return s.WithSeed(seed)
}

// newTask returns task index of count of kind with base's fields, as
// Remote fills them in.
func newTask(base cluster.Task, kind string, index, count int) *cluster.Task {
	t := base
	t.Version, t.Kind, t.Index, t.Count = cluster.SchemaVersion, kind, index, count
	return &t
}

func modelBytes(t testing.TB, m *model.Model) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := model.Write(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// withoutSeconds returns the JSON object b with the keys named seconds
// removed at every depth: what a result holds but for times.
func withoutSeconds(t testing.TB, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	var strip func(v any)
	strip = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if k == "seconds" || k == "Seconds" || k == "TrainSeconds" || k == "train_seconds" ||
					k == "TrainSecondsMean" || k == "train_seconds_mean" || k == "train_seconds_std" {
					delete(x, k)
					continue
				}
				strip(e)
			}
		case []any:
			for _, e := range x {
				strip(e)
			}
		}
	}
	strip(v)
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// jsonWithoutSeconds marshals v and removes its times.
func jsonWithoutSeconds(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return withoutSeconds(t, b)
}

// localJob is a compute.Doer that runs every task in this process with
// an Executor, after the round trip through the message a worker decodes
// (Encode, DecodeTask: the task must validate). It records the indices it
// ran.
type localJob struct {
	t     testing.TB
	exec  *compute.Executor
	fetch func(context.Context, string) (string, error)
	count int // the job's tasks

	mu  sync.Mutex
	ran map[int]int
}

func (j *localJob) Do(ctx context.Context, t *cluster.Task) ([]byte, error) {
	b, err := t.Encode()
	if err != nil {
		return nil, err
	}
	dt, err := cluster.DecodeTask(b)
	if err != nil {
		return nil, err
	}
	if dt.Count != j.count {
		return nil, fmt.Errorf("task %d says %d tasks, the job has %d", dt.Index, dt.Count, j.count)
	}
	j.mu.Lock()
	if j.ran == nil {
		j.ran = map[int]int{}
	}
	j.ran[dt.Index]++
	j.mu.Unlock()
	return j.exec.Execute(ctx, dt, j.fetch, nil)
}

// checkRanAll reports an error unless every task of the job ran exactly
// once.
func (j *localJob) checkRanAll() {
	j.t.Helper()
	j.mu.Lock()
	defer j.mu.Unlock()
	var bad []int
	for i := range j.count {
		if j.ran[i] != 1 {
			bad = append(bad, i)
		}
	}
	if len(bad) > 0 || len(j.ran) != j.count {
		slices.Sort(bad)
		j.t.Errorf("tasks %v did not run exactly once (ran %v of %d)", bad, j.ran, j.count)
	}
}
