package input

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/polyhedral/cpm/reader"
)

// ZeroRestart says why Run starts its run again: file Path holds a
// feature index 0, at line Line (0 when auto's scan found it, at a line
// it does not tell), so reader.ZeroBasedAuto reads it as 0-based.
type ZeroRestart struct {
	Path string
	Line int
}

// String renders "path: index 0 at line L" (or "path: holds an index 0").
func (z *ZeroRestart) String() string {
	if z.Line > 0 {
		return fmt.Sprintf("%s: index 0 at line %d", z.Path, z.Line)
	}
	return z.Path + ": holds an index 0"
}

// Run opens the input at path (Open with cfg and opts), calls run with it,
// closes it, and returns run's error, or else Close's.
//
// With reader.ZeroBasedAuto (the mode opts set by default) a pass over
// LIBSVM text scans each file for an index 0 before reading its rows
// (reader.IsZeroBased): a file with none, unless it carries cpm's zstd
// note, is read and decompressed twice on the first pass. When every file
// of the source is LIBSVM text in a regular file, which can be read again
// (see Source.OneBasedFirst), Run skips the scan: the passes read the source
// as 1-based (reader.ZeroBasedNo, so an index 0 is an error), which gives
// auto's rows for files without an index 0, while the cache, if any, is
// checked and written with opts as given. When run returns, Run judges
// whether its outcome is the one of a run with the scan:
//
//   - a pass read the whole source without error, or run failed with no
//     error from such a pass, or was cancelled (context.Canceled,
//     context.DeadlineExceeded): the outcome stands (an error that is not
//     the reader's does not depend on how indices are read);
//   - a pass met an index 0 (a *reader.ParseError wrapping
//     reader.ErrIndexZero): its file is 0-based, and the run restarts;
//   - a pass met another *reader.ParseError (an error whose text or line
//     may depend on the reading, such as reader.ErrIndexRange): Run scans
//     its file as auto does, and the run restarts if it holds an index 0;
//   - run returned nil before a pass reached the end of the source (it
//     needed fewer rows): Run scans the files, and the run restarts if one
//     holds an index 0.
//
// To restart, Run closes the input (a cache being written by the first
// pass is discarded, a temporary one removed with its directory), calls
// restart (if not nil) with the file that holds the index 0, and calls run
// again on an Input opened with cfg and opts as given, whose outcome is
// Run's. run must therefore start from scratch each time: then the result
// is the one the run with auto's scan gives, byte for byte for a
// deterministic run. Standard input, pipes, Arrow and Parquet files, a
// mode other than auto: Run opens the input as Open does and calls run
// once.
func Run(path string, cfg Config, opts []reader.Option, restart func(*ZeroRestart), run func(*Input) error) error {
	in, err := Open(path, cfg, opts...)
	if err != nil {
		return err
	}
	if first := in.src.OneBasedFirst(opts); first != nil {
		in.pre = &presumption{opts: first}
	}
	err = run(in)
	z, zerr := in.zeroRestart(err)
	if cerr := in.Close(); z == nil {
		return cmp.Or(err, zerr, cerr)
	}
	if restart != nil {
		restart(z)
	}
	in, err = Open(path, cfg, opts...)
	if err != nil {
		return err
	}
	err = run(in)
	return cmp.Or(err, in.Close())
}

// presumption records the passes of an Input that Run has read its
// source as 1-based without auto's scan.
type presumption struct {
	opts   []reader.Option // the passes' options (Source.OneBasedFirst)
	mu     sync.Mutex
	opened bool  // a pass read the source
	done   bool  // a pass reached the end of the source
	err    error // the first error a pass over the source returned
}

// note records what Next of a pass over the source returned.
func (p *presumption) note(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case err == io.EOF:
		p.done = true
	case err != nil && p.err == nil:
		p.err = err
	}
}

// sourceOpts returns the options of a pass over the source: with the
// presumption, reader.ZeroBasedNo after in.opts.
func (in *Input) sourceOpts() []reader.Option {
	if in.pre == nil {
		return in.opts
	}
	in.pre.mu.Lock()
	in.pre.opened = true
	in.pre.mu.Unlock()
	return in.pre.opts
}

// zeroRestart returns, for a run over in that returned runErr, the file
// that makes Run restart the run (see Run), or nil; and the error of a
// scan that could not decide, which then stands beside runErr.
func (in *Input) zeroRestart(runErr error) (*ZeroRestart, error) {
	p := in.pre
	if p == nil {
		return nil, nil
	}
	p.mu.Lock()
	opened, done, err := p.opened, p.done, p.err
	p.mu.Unlock()
	var pe *reader.ParseError
	switch {
	case !opened || errors.Is(runErr, context.Canceled) || errors.Is(runErr, context.DeadlineExceeded):
		return nil, nil
	case err != nil && errors.Is(err, reader.ErrIndexZero) && errors.As(err, &pe):
		return &ZeroRestart{Path: pe.Path, Line: pe.Line}, nil
	case err != nil && !errors.As(err, &pe), err == nil && (done || runErr != nil):
		return nil, nil
	}
	files := in.src.Files
	if err != nil {
		// The error is that of pe's file, read with the decision of its own
		// scan under auto, whatever the other files hold.
		files = []string{pe.Path}
	}
	for _, f := range files {
		zero, err := reader.IsZeroBased(f, in.opts...)
		if err != nil {
			return nil, err
		}
		if zero {
			return &ZeroRestart{Path: f}, nil
		}
	}
	return nil, nil
}
