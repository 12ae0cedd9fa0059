package budget

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadAllSize(t *testing.T) {
	for _, c := range []struct {
		name   string
		prefix string
		input  string
		limit  int64
		size   int64
		want   string // "" with tooLarge
	}{
		{"known size", "ab", "cdef", 10, 4, "abcdef"},
		{"unknown size", "ab", "cdef", 10, -1, "abcdef"},
		{"grew since stat", "", "abcdef", 10, 3, "abcdef"},
		{"shrank since stat", "", "ab", 10, 6, "ab"},
		{"exactly the limit", "ab", "cd", 4, 2, "abcd"},
		{"one byte over", "ab", "cde", 4, 3, ""},
		{"over, size unknown", "", "abcde", 4, -1, ""},
		{"grew over the limit", "", "abcde", 4, 2, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ReadAllSize([]byte(c.prefix), strings.NewReader(c.input), "in", c.limit, c.size)
			if c.want == "" {
				var e *TooLargeError
				if !errors.Is(err, ErrTooLarge) || !errors.As(err, &e) || e.Name != "in" || e.Limit != c.limit {
					t.Fatalf("got %q, %v; want a *TooLargeError naming in and %d", got, err, c.limit)
				}
				return
			}
			if err != nil || string(got) != c.want {
				t.Fatalf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

func TestReadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, bytes.Repeat([]byte("x"), 100), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(path, 100); err != nil || len(b) != 100 {
		t.Fatalf("at the cap: %d bytes, %v", len(b), err)
	}
	_, err := ReadFile(path, 99)
	var e *TooLargeError
	if !errors.As(err, &e) || e.Size != 100 || !strings.Contains(err.Error(), path) {
		t.Fatalf("beyond the cap: %v, want a *TooLargeError naming the file and its size", err)
	}
	if b, _ := Physical(); b <= 0 || Default() != b/2 {
		t.Fatalf("Physical = %d, Default = %d", b, Default())
	}
}
