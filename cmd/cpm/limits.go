package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/polyhedral/cpm/internal/budget"
	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/sgd"
)

// Defaults of the input limits that every command reading data takes.
const (
	// defaultMaxFeatures bounds the feature indices accepted: 1<<24
	// (16,777,216) covers URL (3.2M features) and webspam trigram (16.6M),
	// while capping the weight matrix a hostile index can make the trainer
	// allocate (D×stride float32: 1 GiB at K = 16). KDD Cup 2010 (20.2M
	// and 29.9M features) needs --max-features raised.
	defaultMaxFeatures = 1 << 24
	// defaultMaxLineBytes bounds one LIBSVM line: 8 MiB holds about 400,000
	// "index:value" pairs, far beyond the densest rows of the usual data
	// sets (an MNIST row is 2 KB, a webspam trigram row averages 3,700
	// nonzeros, about 70 KB), and keeps the reading pipeline's worst case
	// (2·GOMAXPROCS+2 chunks of at most twice the longest line) near 100
	// MiB on two cores; the reader's own default, 64 MiB, allows eight
	// times that.
	defaultMaxLineBytes = 8 << 20
	// maxLineBytesFlag is the largest --max-line-bytes accepted.
	maxLineBytesFlag = 1 << 30
)

// inputLimits holds the --max-features, --max-line-bytes and --zero-based
// flags.
type inputLimits struct {
	features  countFlag
	lineBytes countFlag
	zero      *zeroBasedFlag
	columns   *columnFlags // --label-column and the like (columnflags.go)
}

// addLimitFlags registers --max-features and --max-line-bytes on fs with
// their defaults. After parsing, opts returns the matching reader options
// and annotate says which flag to raise when an error hit a limit.
func addLimitFlags(fs *flag.FlagSet) *inputLimits {
	l := &inputLimits{
		features:  countFlag{v: defaultMaxFeatures, min: 2, max: 1 << 32},
		lineBytes: countFlag{v: defaultMaxLineBytes, min: 1, max: maxLineBytesFlag, sizes: true},
	}
	fs.Var(&l.features, "max-features", "accept feature indices up to `N`-1 (N is the largest index + 1, the feature count of 1-based data); a larger index is an error, so that a bad row cannot blow up the weights")
	fs.Var(&l.lineBytes, "max-line-bytes", "accept LIBSVM text lines up to `bytes` long (suffixes KiB, MiB, GiB; at most 1GiB); a longer line is an error, so that memory stays bounded")
	l.zero = addZeroBasedFlag(fs)
	l.columns = addColumnFlags(fs)
	return l
}

// opts returns the reader options of the limits, with readers that stop
// when ctx is cancelled.
func (l *inputLimits) opts(ctx context.Context) []reader.Option {
	return append([]reader.Option{
		reader.WithMaxIndex(uint32(l.features.v - 1)),
		reader.WithMaxLineBytes(int(l.lineBytes.v)),
		reader.WithContext(ctx),
	}, append(l.zero.opts(), l.columns.opts()...)...)
}

// changed returns the first flag given that changes the rows a file
// gives (--zero-based other than auto, a column flag), or "".
func (l *inputLimits) changed() string {
	if l.zero.v != reader.ZeroBasedAuto {
		return "--zero-based " + l.zero.v.String()
	}
	for _, c := range []struct{ flag, v string }{{"--label-column", l.columns.label}, {"--features-column", l.columns.features},
		{"--index-column", l.columns.index}, {"--value-column", l.columns.value}} {
		if c.v != "" {
			return c.flag
		}
	}
	return ""
}

// annotate appends to *err, when it is an input error that a limit caused,
// the flag that raises the limit. Use it deferred, on a named result.
func (l *inputLimits) annotate(err *error) {
	l.zero.annotate(err)
	switch {
	case *err == nil:
	case errors.Is(*err, reader.ErrIndexRange):
		*err = fmt.Errorf("%w; --max-features %d accepts indices up to %d: raise it to read this input", *err, l.features.v, l.features.v-1)
	case errors.Is(*err, reader.ErrLineTooLong):
		*err = fmt.Errorf("%w; raise --max-line-bytes (now %d) to read this input", *err, l.lineBytes.v)
	}
}

// countFlag is a positive integer flag bounded by [min, max]; with sizes,
// it takes the binary suffixes KiB, MiB and GiB (or K, M, G).
type countFlag struct {
	v, min, max uint64
	sizes       bool
}

func (c *countFlag) String() string {
	if c == nil {
		return ""
	}
	return strconv.FormatUint(c.v, 10)
}

func (c *countFlag) Set(s string) error {
	num, mult := s, uint64(1)
	if c.sizes {
		for _, u := range []struct {
			suffix string
			mult   uint64
		}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}} {
			if t, ok := strings.CutSuffix(strings.ToLower(s), u.suffix); ok {
				num, mult = t, u.mult
				break
			}
		}
	}
	v, err := strconv.ParseUint(num, 10, 64)
	if err != nil || v > c.max/mult || v*mult < c.min {
		return fmt.Errorf("%q: want a whole number from %d to %d", s, c.min, c.max)
	}
	c.v = v * mult
	return nil
}

var _ flag.Value = (*countFlag)(nil)

// memoryLimit holds the --max-memory flag: the memory budget of a
// command's weights (training) and of the models it loads.
type memoryLimit struct {
	bytes countFlag
}

// maxMemoryFlag is the largest --max-memory accepted: 2^50 bytes (1 PiB).
const maxMemoryFlag = 1 << 50

// addMemoryFlag registers --max-memory on fs, defaulting to half of the
// machine's memory (budget.Default).
func addMemoryFlag(fs *flag.FlagSet) *memoryLimit {
	m := &memoryLimit{bytes: countFlag{v: uint64(budget.Default()), min: 1 << 20, max: maxMemoryFlag, sizes: true}}
	fs.Var(&m.bytes, "max-memory", "refuse, before allocating, a run whose weights or a model whose weights would take more than `bytes` of memory (suffixes KiB, MiB, GiB; default half of the machine's memory); also caps the size of a checkpoint read by --resume")
	return m
}

// v returns the limit in bytes.
func (m *memoryLimit) v() int64 { return int64(m.bytes.v) }

// annotate appends to *err, when the memory limit refused it, the flag
// that raises the limit. Use it deferred, on a named result.
func (m *memoryLimit) annotate(err *error) {
	if *err != nil && (errors.Is(*err, budget.ErrMemoryLimit) || errors.Is(*err, sgd.ErrCheckpointTooLarge)) {
		*err = fmt.Errorf("%w; raise --max-memory (now %d bytes) to allow it", *err, m.v())
	}
}

// memoryUsage is the line of topUsage about --max-memory, with this
// machine's default.
func memoryUsage() string {
	b, ok := budget.Physical()
	how := "read from the system"
	if !ok {
		how = "assumed: the system's could not be read"
	}
	return fmt.Sprintf(`
--max-memory BYTES (train, cv, predict, eval, export, inspect, plot): the
memory budget of the weights a run trains and of the models it loads;
beyond it the command stops before allocating, with exit status 3. Default:
half of the machine's memory, here %d bytes (of %d, %s).
`, b/2, b, how)
}
