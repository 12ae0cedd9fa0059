package cluster

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestValidatePath(t *testing.T) {
	for _, tc := range []struct {
		path string
		ok   bool
	}{
		{"rows.svm", true},
		{"a/b/rows.svm.zst", true},
		{"a b/ü.svm", true},
		{"..x/y..", true},
		{"/etc/shadow", false},
		{"../x", false},
		{"..", false},
		{"a/../../x", false},
		{"a/../b", false},
		{"a\\b", false},
		{"..\\x", false},
		{"a//b", false},
		{"./a", false},
		{"a/.", false},
		{"a/", false},
		{"a\x00b", false},
		{"a\nb", false},
		{"\xff", false},
		{strings.Repeat("a", MaxPathBytes), true},
		{strings.Repeat("a", MaxPathBytes+1), false},
	} {
		task := testTask("j", 0, 1, digestOf("x"))
		task.Path = tc.path
		err := task.Validate()
		if (err == nil) != tc.ok || ValidPath(tc.path) != tc.ok {
			t.Errorf("Validate with path %q: %v, ValidPath %v; want ok %v", tc.path, err, ValidPath(tc.path), tc.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidTask) {
			t.Errorf("path %q: %v does not wrap ErrInvalidTask", tc.path, err)
		}
	}
	// An empty Path is no path: the rows come from the data store.
	if err := testTask("j", 0, 1, digestOf("x")).Validate(); err != nil {
		t.Error(err)
	}
	// A message naming a path outside is refused as it decodes.
	b := []byte(`{"v":1,"job":"j","index":0,"count":1,"kind":"train-model","learner":"cpm","flags":{},"seed":0,"data":"` + digestOf("x") + `","path":"/etc/shadow","part":0}`)
	if _, err := DecodeTask(b); !errors.Is(err, ErrInvalidTask) {
		t.Errorf("DecodeTask with /etc/shadow: %v", err)
	}
}

// pathTask is task i of n of job reading the data root's file rel, whose
// bytes have the SHA-256 digest.
func pathTask(job string, i, n int, rel, digest string) *Task {
	task := testTask(job, i, n, digest)
	task.Path = rel
	return task
}

// pathExec is an executor that records the path the data function gives
// for t.Data, then behaves as fakeExec.
type pathExec struct {
	fakeExec
	mu    sync.Mutex
	paths []string
}

func (e *pathExec) Execute(ctx context.Context, t *Task, data func(context.Context, string) (string, error), progress func(Progress)) ([]byte, error) {
	return e.fakeExec.Execute(ctx, t, func(ctx context.Context, digest string) (string, error) {
		p, err := data(ctx, digest)
		if err == nil {
			e.mu.Lock()
			e.paths = append(e.paths, p)
			e.mu.Unlock()
		}
		return p, err
	}, progress)
}

// writeFile writes content to root/rel, making its directories.
func writeFile(t *testing.T, root, rel, content string) string {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A worker with a data root runs a task with a Path on the file itself,
// hashing it once for all the tasks that read it.
func TestDataRootTask(t *testing.T) {
	_, c := setup(t, Options{})
	root := t.TempDir()
	const rows = "1 1:1\n-1 2:1\n"
	p := writeFile(t, root, "sets/a/rows.svm", rows)
	exec := &pathExec{}
	startWorker(t, c, exec, WorkerOptions{Name: "w1", DataRoot: root, Concurrency: 2})
	j := submit(t, c, "rooted", 3)
	ctx := testCtx(t)
	hashed := filesHashed.Load()
	res, errs := make([][]byte, 3), make([]error, 3)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() { res[i], errs[i] = j.Do(ctx, pathTask("rooted", i, 3, "sets/a/rows.svm", digestOf(rows))) })
	}
	wg.Wait()
	for i := range 3 {
		if errs[i] != nil || !bytes.Equal(res[i], want(i, []byte(rows))) {
			t.Fatalf("task %d: %x, %v", i, res[i], errs[i])
		}
	}
	if n := filesHashed.Load() - hashed; n != 1 {
		t.Errorf("the file was hashed %d times for 3 tasks, want 1", n)
	}
	resolved, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	exec.mu.Lock()
	defer exec.mu.Unlock()
	if len(exec.paths) != 3 {
		t.Fatalf("data paths %q", exec.paths)
	}
	for _, got := range exec.paths {
		if got != resolved {
			t.Errorf("data path %s, want %s", got, resolved)
		}
	}
	noneLeft(t, c)
}

// Tasks with a Path that the worker must not or cannot read fail once,
// with a message that says why, and run nothing.
func TestDataRootRefusals(t *testing.T) {
	_, c := setup(t, Options{})
	root, outside := t.TempDir(), t.TempDir()
	const rows = "1 1:1\n"
	writeFile(t, root, "rows.svm", rows)
	secret := writeFile(t, outside, "secret.svm", rows) // the digest matches: only the place is wrong
	if err := os.Symlink(secret, filepath.Join(root, "link.svm")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "dirlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "dir"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, root, "changed.svm", "1 1:2\n")

	exec := &pathExec{}
	var log syncBuffer
	startWorker(t, c, exec, WorkerOptions{Name: "w1", DataRoot: root, Log: &log})
	for _, tc := range []struct{ name, path, want string }{
		{"symlink-out", "link.svm", "outside the data root"},
		{"dir-symlink-out", "dirlink/secret.svm", "outside the data root"},
		{"directory", "dir", "not a regular file"},
		{"missing", "none.svm", "data not found"},
		{"changed", "changed.svm", "changed.svm changed: digest " + digestOf("1 1:2\n") + ", want " + digestOf(rows)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := submit(t, c, tc.name, 1)
			_, err := j.Do(testCtx(t), pathTask(tc.name, 0, 1, tc.path, digestOf(rows)))
			var te *TaskError
			if !errors.As(err, &te) || !strings.Contains(te.Msg, tc.want) {
				t.Fatalf("task: %v, want a *TaskError saying %q", err, tc.want)
			}
			j.Finish(err)
		})
	}
	// The file inside the root, through a link inside the root, is fine.
	if err := os.Symlink("rows.svm", filepath.Join(root, "inner.svm")); err != nil {
		t.Fatal(err)
	}
	j := submit(t, c, "inner", 1)
	if b, err := j.Do(testCtx(t), pathTask("inner", 0, 1, "inner.svm", digestOf(rows))); err != nil || !bytes.Equal(b, want(0, []byte(rows))) {
		t.Fatalf("inner link: %x, %v", b, err)
	}
	j.Finish(nil)
	time.Sleep(1500 * time.Millisecond) // beyond AckWait: a redelivery would have run
	noneLeft(t, c)
	if n := strings.Count(log.String(), "failed "); n != 5 {
		t.Errorf("%d failures logged, want 5:\n%s", n, log.String())
	}
	exec.mu.Lock()
	defer exec.mu.Unlock()
	if len(exec.paths) != 1 {
		t.Errorf("files handed to the executor: %q, want only rows.svm", exec.paths)
	}
}

// A task with a Path fails, once, on a worker without a data root, which
// does not run it.
func TestDataRootMissing(t *testing.T) {
	_, c := setup(t, Options{})
	const rows = "1 1:1\n"
	exec := &pathExec{}
	var log syncBuffer
	startWorker(t, c, exec, WorkerOptions{Name: "w1", Log: &log})
	j := submit(t, c, "unrooted", 1)
	_, err := j.Do(testCtx(t), pathTask("unrooted", 0, 1, "rows.svm", digestOf(rows)))
	var te *TaskError
	const msg = `data file "rows.svm": this worker has no --data-root; start it with --data-root DIR or submit without --data-root`
	if !errors.As(err, &te) || te.Msg != msg || te.Worker != "w1" {
		t.Fatalf("task: %v, want a *TaskError %q", err, msg)
	}
	j.Finish(err)
	time.Sleep(1500 * time.Millisecond) // beyond AckWait: a redelivery would have run
	if exec.total() != 0 {
		t.Errorf("the task ran %d times", exec.total())
	}
	if n := strings.Count(log.String(), "started "); n != 1 {
		t.Errorf("%d deliveries, want 1:\n%s", n, log.String())
	}
	noneLeft(t, c)
}

// A file rewritten while a task reads it fails the task: the executor may
// have read bytes of another digest.
func TestDataRootChangedDuringTask(t *testing.T) {
	_, c := setup(t, Options{})
	root := t.TempDir()
	const rows = "1 1:1\n"
	p := writeFile(t, root, "rows.svm", rows)
	startWorker(t, c, &rewriter{path: p}, WorkerOptions{Name: "w1", DataRoot: root})
	j := submit(t, c, "rewritten", 1)
	_, err := j.Do(testCtx(t), pathTask("rewritten", 0, 1, "rows.svm", digestOf(rows)))
	var te *TaskError
	if !errors.As(err, &te) || te.Msg != "data file rows.svm changed while the task ran" {
		t.Fatalf("task: %v", err)
	}
	j.Finish(err)
}

// rewriter is an executor that asks for its task's data, then rewrites
// the file at path and succeeds.
type rewriter struct{ path string }

func (r *rewriter) Execute(ctx context.Context, t *Task, data func(context.Context, string) (string, error), progress func(Progress)) ([]byte, error) {
	if _, err := data(ctx, t.Data); err != nil {
		return nil, err
	}
	return []byte("done"), os.WriteFile(r.path, []byte("1 1:1\n-1 1:2\n"), 0o600)
}

// A worker refuses to start on a data root that is not a directory.
func TestDataRootNotDir(t *testing.T) {
	_, c := setup(t, Options{})
	f := writeFile(t, t.TempDir(), "file", "x")
	for _, dir := range []string{f, filepath.Join(f, "missing"), filepath.Join(t.TempDir(), "missing")} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := c.Work(ctx, &fakeExec{}, WorkerOptions{Name: "w", CacheDir: t.TempDir(), DataRoot: dir})
		cancel()
		if err == nil || !strings.Contains(err.Error(), "data root") {
			t.Errorf("data root %s: %v", dir, err)
		}
	}
}

// The digest of a file is remembered per version: an unchanged file is not
// hashed again, a file replaced by one of the same size and modification
// time (rsync -t writes a new file and renames it) is.
func TestDataRootDigestCache(t *testing.T) {
	dir := t.TempDir()
	d, err := openDataRoot(dir, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	p := writeFile(t, dir, "rows.svm", "1 1:1\n")
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	hashed := filesHashed.Load()
	for range 2 {
		if _, _, err := d.file(ctx, "rows.svm", digestOf("1 1:1\n")); err != nil {
			t.Fatal(err)
		}
	}
	if n := filesHashed.Load() - hashed; n != 1 {
		t.Errorf("hashed %d times, want 1", n)
	}
	tmp := writeFile(t, dir, ".tmp", "1 1:2\n")
	if err := os.Chtimes(tmp, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	_, _, err = d.file(ctx, "rows.svm", digestOf("1 1:1\n"))
	if err == nil || !strings.Contains(err.Error(), "changed: digest") {
		t.Errorf("replaced file: %v", err)
	}
	if n := filesHashed.Load() - hashed; n != 2 {
		t.Errorf("hashed %d times, want 2", n)
	}
	// A file larger than the worker reads is another worker's to try.
	d.maxData = 2
	writeFile(t, dir, "big.svm", "1 1:1\n")
	if _, _, err := d.file(ctx, "big.svm", digestOf("1 1:1\n")); !errors.Is(err, ErrDataUnavailable) {
		t.Errorf("file over MaxData: %v", err)
	}
}
