package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The bounds the README states for --max-line-bytes L: a line refused at
// the limit costs a command at most 2.5 L of peak RSS beyond 32 MiB (the
// line buffer grows by doubling to L+1 bytes, 2 L allocated in all), and a
// line just under it, read and trained on, at most 3 L beyond 64 MiB.
const (
	refusedLineRSS  = 5 * (64 << 20) / 2
	refusedLineBase = 32 << 20
	validLineRSS    = 3 * (64 << 20)
	validLineBase   = 64 << 20
)

// TestLineLimitMemory checks that --max-line-bytes holds within a small
// factor: with a 64 MiB limit, a 200 MB line on standard input is refused
// at the limit with a peak RSS under 2.5 × 64 MiB + 32 MiB (it peaked at
// 217 MiB while the line buffer was grown from 64 MiB to 64 MiB + 1 in one
// more copy), and a valid line just under it, from a file or standard
// input, is trained on under 3 × 64 MiB + 64 MiB.
func TestLineLimitMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("reads lines of 64 MiB and more")
	}
	const limit = 64 << 20
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	valid := filepath.Join(dir, "valid.libsvm")
	writeLongRow(t, valid, limit-512)

	check := func(args []string, r procResult, bound int64) {
		t.Helper()
		t.Logf("cpm %s: peak RSS %.1f MiB (bound %d MiB)", strings.Join(args, " "), float64(r.rss)/(1<<20), bound>>20)
		if rssBoundsHold && r.rss > bound {
			t.Errorf("cpm %s: peak RSS %d MiB, want under %d MiB for a limit of %d MiB", strings.Join(args, " "), r.rss>>20, bound>>20, limit>>20)
		}
	}

	args := []string{"train", "-q", "-k", "2", "-i", "100", "--max-line-bytes", "64MiB", "-t", "-", "-o", filepath.Join(out, "m.model")}
	in := &longLine{head: []byte("1 1:1\n-1 2:1\n"), n: 200 << 20}
	r := cpmProcess(t, in, args...)
	wantFailure(t, args, r.code, r.stderr, fmt.Sprintf("-:3:%d: line too long", limit+1))
	check(args, r, refusedLineRSS+refusedLineBase)
	wantNoFiles(t, args, out)

	for _, stdin := range []bool{false, true} {
		args := []string{"train", "-q", "-k", "2", "-i", "100", "--max-line-bytes", "64MiB", "-t", valid, "-o", filepath.Join(out, "m.model")}
		var r procResult
		if stdin {
			f, err := os.Open(valid)
			if err != nil {
				t.Fatal(err)
			}
			args[len(args)-3] = "-"
			r = cpmProcess(t, f, args...)
			f.Close()
		} else {
			r = cpmProcess(t, nil, args...)
		}
		if r.code != 0 {
			t.Fatalf("cpm %s: exit %d: %s", strings.Join(args, " "), r.code, r.stderr)
		}
		check(args, r, validLineRSS+validLineBase)
	}
}

// writeLongRow writes a LIBSVM file of three rows whose second is about n
// bytes long: sorted indices with long values (so that its row holds few
// nonzeros and the weights stay small).
func writeLongRow(t *testing.T, path string, n int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	w.WriteString("1 1:1\n-1")
	value := "1." + strings.Repeat("0", 200) + "1"
	for i, k := 1, 2; k < n-256; i++ {
		m, _ := fmt.Fprintf(w, " %d:%s", i, value)
		k += m
	}
	w.WriteString("\n1 3:1\n")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
