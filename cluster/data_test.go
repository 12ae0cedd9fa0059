package cluster

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// PutData stores a file once under its digest.
func TestPutDataOnce(t *testing.T) {
	_, c := setup(t, Options{})
	ctx := testCtx(t)
	d1, rows := putData(t, c, strings.Repeat("1 3:0.25\n", 50000)) // several chunks
	info1, err := c.data.GetInfo(ctx, d1)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "copy.svm")
	if err := os.WriteFile(p, rows, 0o600); err != nil {
		t.Fatal(err)
	}
	d2, err := c.PutData(ctx, p)
	if err != nil || d2 != d1 || d1 != digestOf(string(rows)) {
		t.Fatalf("PutData again: %s, %v; first %s", d2, err, d1)
	}
	info2, err := c.data.GetInfo(ctx, d1)
	if err != nil || info2.NUID != info1.NUID || info1.Chunks < 2 {
		t.Errorf("object re-uploaded or not chunked: %+v then %+v, %v", info1, info2, err)
	}
	objs, err := c.data.List(ctx)
	if err != nil || len(objs) != 1 {
		t.Errorf("%d data objects, %v; want 1", len(objs), err)
	}
	if _, err := c.PutData(ctx, filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("PutData of a missing file: no error")
	}
}

// countingStore counts the objects a cache downloads.
type countingStore struct {
	jetstream.ObjectStore
	gets atomic.Int32
}

func (s *countingStore) Get(ctx context.Context, name string, opts ...jetstream.GetObjectOpt) (jetstream.ObjectResult, error) {
	s.gets.Add(1)
	return s.ObjectStore.Get(ctx, name, opts...)
}

// The cache verifies digests, bounds sizes, downloads a digest once for
// concurrent requests, and refuses names that are not digests.
func TestCacheFetch(t *testing.T) {
	_, c := setup(t, Options{})
	ctx := testCtx(t)
	good, rows := putData(t, c, "1 1:1\n")
	forged := digestOf("the real bytes")
	if _, err := c.data.PutBytes(ctx, forged, []byte("other bytes")); err != nil {
		t.Fatal(err)
	}
	store := &countingStore{ObjectStore: c.data}
	dir := t.TempDir()
	k, err := openCache(dir, 1<<20, 1<<20, store)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	paths := make([]string, 8)
	for i := range paths {
		wg.Go(func() {
			s := &dataSession{c: k}
			defer s.end()
			p, err := s.get(ctx, good)
			if err != nil {
				t.Error(err)
				return
			}
			paths[i] = p
		})
	}
	wg.Wait()
	if n := store.gets.Load(); n != 1 {
		t.Errorf("%d downloads of one digest, want 1", n)
	}
	if b, err := os.ReadFile(paths[0]); err != nil || string(b) != string(rows) || filepath.Dir(paths[0]) != dir {
		t.Errorf("cached file %s: %q, %v", paths[0], b, err)
	}
	s := &dataSession{c: k}
	defer s.end()
	for _, tc := range []struct {
		digest string
		is     error
	}{
		{forged, ErrDataUnavailable},
		{digestOf("never stored"), ErrDataNotFound},
		{"../../etc/passwd", nil},
		{strings.ToUpper(good), nil},
	} {
		_, err := s.get(ctx, tc.digest)
		if err == nil || (tc.is != nil && !errors.Is(err, tc.is)) {
			t.Errorf("get %q: %v, want %v", tc.digest, err, tc.is)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, forged)); !os.IsNotExist(err) {
		t.Errorf("forged object cached: %v", err)
	}
	small, err := openCache(t.TempDir(), 1<<20, 3, c.data)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := small.acquire(ctx, good); !errors.Is(err, ErrDataUnavailable) || !strings.Contains(err.Error(), "at most 3") {
		t.Errorf("object over MaxData: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tmpPrefix) {
			t.Errorf("temporary file %s left", e.Name())
		}
	}
}

// The cache stays within its bound by evicting the least recently used
// files no task holds, and indexes the files it finds when it opens.
func TestCacheEviction(t *testing.T) {
	_, c := setup(t, Options{})
	ctx := testCtx(t)
	var digests []string
	for _, ch := range "abcde" {
		d, _ := putData(t, c, strings.Repeat(string(ch), 1000))
		digests = append(digests, d)
	}
	dir := t.TempDir()
	k, err := openCache(dir, 3000, 1<<20, c.data)
	if err != nil {
		t.Fatal(err)
	}
	dirSize := func() (n int64) {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			fi, _ := e.Info()
			n += fi.Size()
		}
		return n
	}
	held := &dataSession{c: k}
	if _, err := held.get(ctx, digests[0]); err != nil { // in use throughout
		t.Fatal(err)
	}
	for _, d := range digests[1:] {
		s := &dataSession{c: k}
		if _, err := s.get(ctx, d); err != nil {
			t.Fatal(err)
		}
		s.end()
		if n := dirSize(); n > 3000 {
			t.Errorf("cache holds %d bytes, bound 3000", n)
		}
	}
	has := func(d string) bool { _, err := os.Stat(filepath.Join(dir, d)); return err == nil }
	if !has(digests[0]) || !has(digests[4]) || !has(digests[3]) || has(digests[1]) || has(digests[2]) {
		t.Errorf("cache holds the wrong files")
	}
	// Everything in use: the bound is exceeded rather than failing tasks,
	// and restored on release.
	s := &dataSession{c: k}
	for _, d := range digests[1:] {
		if _, err := s.get(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	if n := dirSize(); n != 5000 {
		t.Errorf("cache holds %d bytes with 5 files in use", n)
	}
	s.end()
	held.end()
	if n := dirSize(); n > 3000 {
		t.Errorf("cache holds %d bytes after release, bound 3000", n)
	}
	k2, err := openCache(dir, 2000, 1<<20, c.data)
	if err != nil {
		t.Fatal(err)
	}
	if k2.size != 2000 || len(k2.files) != 2 || dirSize() != 2000 {
		t.Errorf("reopened cache: %d bytes in %d files, dir %d", k2.size, len(k2.files), dirSize())
	}
}
