package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"sync"

	"github.com/polyhedral/cpm/reader"
)

// zeroBasedFlag is --zero-based yes|no|auto: how the feature indices of
// the input map to the 1-based indices rows hold (reader.WithZeroBased).
type zeroBasedFlag struct {
	v   reader.ZeroBased
	out func() io.Writer // where the notice goes: the flag set's output

	mu    sync.Mutex
	noted map[string]bool
}

// addZeroBasedFlag registers --zero-based on fs, default auto; notices go
// to fs's output (the command's standard error).
func addZeroBasedFlag(fs *flag.FlagSet) *zeroBasedFlag {
	z := &zeroBasedFlag{out: fs.Output}
	fs.Var(z, "zero-based", "feature indices of LIBSVM input are 0-based: `yes` adds 1 to every index, no reads them as 1-based (index 0 is an error), auto reads a file as 0-based when it holds an index 0 (standard input and pipes as 1-based)")
	return z
}

func (z *zeroBasedFlag) String() string {
	if z == nil {
		return "auto"
	}
	return z.v.String()
}

func (z *zeroBasedFlag) Set(s string) error {
	v, err := reader.ParseZeroBased(s)
	if err != nil {
		return err
	}
	z.v = v
	return nil
}

var _ flag.Value = (*zeroBasedFlag)(nil)

// opts returns the reader options of the flag: the mode, and with auto a
// notice printed once per file that auto reads as 0-based.
func (z *zeroBasedFlag) opts() []reader.Option {
	return []reader.Option{reader.WithZeroBased(z.v), reader.WithZeroBasedNotice(z.notice)}
}

// notice prints, once per path, that auto found the file's indices
// 0-based.
func (z *zeroBasedFlag) notice(path string) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.noted[path] {
		return
	}
	if z.noted == nil {
		z.noted = map[string]bool{}
	}
	z.noted[path] = true
	fmt.Fprintln(z.out(), zeroBasedNotice(path))
}

// zeroBasedNotice is the line notice prints.
func zeroBasedNotice(path string) string {
	return fmt.Sprintf("cpm: %s: feature indices are 0-based (index 0 found); shifted to 1-based", path)
}

// annotate appends to *err, when it is a feature index 0, the setting of
// --zero-based that reads it.
func (z *zeroBasedFlag) annotate(err *error) {
	if *err == nil || !errors.Is(*err, reader.ErrIndexZero) {
		return
	}
	if z.v == reader.ZeroBasedNo {
		*err = fmt.Errorf("%w; pass --zero-based yes or auto to read 0-based indices", *err)
	} else {
		*err = fmt.Errorf("%w; pass --zero-based yes to read 0-based indices", *err)
	}
}
