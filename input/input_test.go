package input

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/reader/rowcache"
	"github.com/polyhedral/cpm/sparsevec"
)

// heart is a small LIBSVM file: 270 rows, 120 of them labelled +1.
const heart = "../testdata/uci/heart_scale.libsvm"

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readPass reads pass k of in to the end and returns the number of its
// rows with a positive label.
func readPass(t *testing.T, in *Input, k int) (int, error) {
	t.Helper()
	b, err := in.OpenPass(k)
	if err != nil {
		return 0, err
	}
	defer b.Close()
	pos := 0
	for {
		blk, err := b.Next()
		if err == io.EOF {
			return pos, nil
		}
		if err != nil {
			return pos, err
		}
		for _, y := range blk.Labels {
			if y > 0 {
				pos++
			}
		}
		b.Release(blk)
	}
}

// A streamed run reads the same files on every pass: it keeps them open,
// so a training file replaced by a rename, or a shared cache rebuilt by
// another run from other data, changes nothing, while a file rewritten in
// place fails the next pass (or the pass under way, at its end) with an
// error naming the file, instead of training on other data.
func TestStreamInputIdentity(t *testing.T) {
	dir := t.TempDir()
	heartText := readFile(t, heart)
	other := bytes.ReplaceAll(heartText, []byte("\n+1 "), []byte("\n-1 ")) // same length, other labels
	const positives = 120                                                  // heart_scale's +1 rows
	write := func(path string, b []byte) {
		t.Helper()
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	changed := func(t *testing.T, err error, path, what string) {
		t.Helper()
		if !errors.Is(err, ErrInputChanged) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), what) {
			t.Fatalf("got %v; want ErrInputChanged naming %s and %q", err, path, what)
		}
	}
	same := func(t *testing.T, in *Input, k int) {
		t.Helper()
		if n, err := readPass(t, in, k); err != nil || n != positives {
			t.Fatalf("pass %d: %d positive rows, %v; want the %d of the first pass", k, n, err, positives)
		}
	}
	newIn := func(t *testing.T, path, cache string) *Input {
		t.Helper()
		in, err := Open(path, Config{Cache: cache, Readers: 2})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { in.Close() })
		same(t, in, 1)
		return in
	}

	t.Run("renamed over", func(t *testing.T) {
		p, q := filepath.Join(dir, "a.libsvm"), filepath.Join(dir, "a.new")
		write(p, heartText)
		in := newIn(t, p, "")
		write(q, other)
		if err := os.Rename(q, p); err != nil {
			t.Fatal(err)
		}
		same(t, in, 2)
	})
	t.Run("rewritten in place", func(t *testing.T) {
		p := filepath.Join(dir, "b.libsvm")
		write(p, heartText)
		in := newIn(t, p, "")
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		write(p, other)
		// Same inode, size and time: only the contents tell.
		if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
		_, err = readPass(t, in, 2)
		changed(t, err, p, "first or last 64 KiB differ")
	})
	t.Run("grown during a pass", func(t *testing.T) {
		p := filepath.Join(dir, "c.libsvm")
		write(p, heartText)
		in := newIn(t, p, "")
		b, err := in.OpenPass(2)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("1 1:1\n")
		f.Close()
		for err == nil {
			var blk *sparsevec.CSR
			if blk, err = b.Next(); err == nil {
				b.Release(blk)
			}
		}
		changed(t, err, p, fmt.Sprintf("%d bytes, %d when training started", len(heartText)+6, len(heartText)))
	})
	t.Run("cache rebuilt by another run", func(t *testing.T) {
		p, q := filepath.Join(dir, "d.libsvm"), filepath.Join(dir, "e.libsvm")
		cache := filepath.Join(dir, "shared.cpmcache")
		write(p, heartText)
		write(q, other)
		in := newIn(t, p, cache) // writes the cache
		if !in.Stats().CacheBuilt {
			t.Fatal("the cache is not ready after the first pass")
		}
		otherIn, err := Open(q, Config{Cache: cache, Readers: 2}) // another run: the cache is stale for it, so it rebuilds it
		if err != nil {
			t.Fatal(err)
		}
		defer otherIn.Close()
		if n, err := readPass(t, otherIn, 1); err != nil || n != 1 { // its first row kept its +1
			t.Fatalf("the other run's pass: %d positive rows, %v", n, err)
		}
		if err := rowcache.Check(cache, q); err != nil {
			t.Fatalf("the other run did not rebuild the cache: %v", err)
		}
		same(t, in, 2)
	})
	t.Run("unchanged", func(t *testing.T) {
		p := filepath.Join(dir, "f.libsvm")
		write(p, heartText)
		in := newIn(t, p, filepath.Join(dir, "f.cpmcache"))
		same(t, in, 2)
		same(t, in, 3)
	})
}
