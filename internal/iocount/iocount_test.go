package iocount

import (
	"bytes"
	"errors"
	"sync"
	"testing"
)

// shortWriter accepts at most max bytes a call and then fails.
type shortWriter struct{ max int }

var errShort = errors.New("short write")

func (s shortWriter) Write(p []byte) (int, error) {
	if len(p) > s.max {
		return s.max, errShort
	}
	return len(p), nil
}

func TestWriter(t *testing.T) {
	var buf bytes.Buffer
	c := &Writer{W: &buf}
	for _, s := range []string{"abc", "", "defgh"} {
		if n, err := c.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if c.N() != 8 || buf.String() != "abcdefgh" {
		t.Errorf("N() = %d, buffer %q; want 8, \"abcdefgh\"", c.N(), buf.String())
	}
	// A short write counts what the underlying writer accepted.
	s := &Writer{W: shortWriter{max: 2}}
	if n, err := s.Write([]byte("12345")); n != 2 || !errors.Is(err, errShort) {
		t.Fatalf("short Write = %d, %v", n, err)
	}
	if s.N() != 2 {
		t.Errorf("after a short write N() = %d, want 2", s.N())
	}
}

// TestWriterConcurrentN reads N while another goroutine writes; run with
// -race.
func TestWriterConcurrentN(t *testing.T) {
	c := &Writer{W: shortWriter{max: 1 << 20}}
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 1000 {
			c.Write(make([]byte, 3))
		}
	})
	for c.N() < 3000 {
	}
	wg.Wait()
	if c.N() != 3000 {
		t.Errorf("N() = %d, want 3000", c.N())
	}
}
