package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/polyhedral/cpm/input"
	"github.com/polyhedral/cpm/internal/iocount"
	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/reader/libsvm"
	"github.com/polyhedral/cpm/reader/rowcache"
	"github.com/polyhedral/cpm/sparsevec"
)

const convertUsage = `cpm convert --idx-images FILE --idx-labels FILE [--digit D] [flags] -o OUT
       cpm convert INPUT [--digit D] [flags] -o OUT

Converts sparse rows between formats. INPUT may be LIBSVM text (plain or
gzip/zstd/bzip2-compressed), an Arrow IPC file or stream, Parquet, or a
binary row cache, detected from its content; - (standard input) in any of
these; a shard directory; or a directory or quoted glob of such files, read
one after the other sorted by path (names starting with . or _ skipped),
each file's format detected on its own. It is read block by block, so it
may be larger than memory. With --idx-images and --idx-labels
instead, reads the MNIST idx image and label files (plain or compressed):
feature 1+row*cols+col = pixel/255, zero pixels omitted, label = the digit.

OUT's format follows its extension: .arrow, .feather or .ipc an Arrow IPC
file; .arrows an Arrow IPC stream; .parquet or .pq Parquet; .cpmcache the
binary row cache (recording INPUT's size, time and first 64 KiB, so that
train -t INPUT --cache OUT reads it instead of INPUT; a cache of standard
input, a directory or a glob records no source); anything else LIBSVM
text, compressed by the extension (.zst zstd, .gz gzip, else plain). "-"
writes plain LIBSVM text to standard output. Arrow and Parquet output hold
two columns, label: float32 and features: list<struct<index: uint32, value:
float32>>, with cpm.index_base = "1" (1-based indices) in their metadata;
Arrow bodies are uncompressed unless --arrow-compression says otherwise,
and Parquet has version 1 data pages unless --parquet-pages v2. A file OUT appears only once complete (written to a temporary
file, then renamed; a symbolic link's target is replaced); a FIFO or
character device is written straight through. OUT is checked before any
input is read: a directory, or the input itself, is refused.`

// compressionsFor lists the --compression values each output format takes.
var compressionsFor = map[reader.Format][]string{
	reader.ArrowFile:   {"zstd", "lz4", "none"},
	reader.ArrowStream: {"zstd", "lz4", "none"},
	reader.Parquet:     {"zstd", "snappy", "none"},
}

// runConvert implements "cpm convert". It prints a one-line summary to
// stderr and writes data to stdout only when OUT is "-". When ctx is
// cancelled it stops reading, discards the output file it was writing and
// returns ctx's error.
func runConvert(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	o, err := parseConvert(args, stderr)
	if err != nil {
		return err
	}
	defer o.lim.annotate(&err)
	if !o.idx {
		noteData(stderr, "", o.inputs[0], o.lim.opts(ctx))
	}
	start := time.Now()
	src, err := o.openInput(ctx)
	if err != nil {
		return err
	}
	defer src.Close()
	source := "" // the input whose identity a cache records: one file
	if !o.idx && !input.IsShardSet(o.inputs[0]) {
		source = o.inputs[0]
	}
	dst, err := convertOutput(ctx, o.out, o.format, source, o.compression, o.batchRows, stdout, o.lim, o.cols.opts()...)
	if err != nil {
		return err
	}
	defer dst.Abort() // removes the temporary file unless Close succeeded

	n, err := copyBlocks(ctx, src, dst, o.out, o.oneVsRest, o.digit)
	if err != nil {
		return err
	}
	if err := src.Close(); err != nil {
		return fmt.Errorf("reading input: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return err // before Close: the output never appears under its name
	}
	if err := dst.Close(); err != nil {
		return err
	}
	o.summary(stderr, dst, n, time.Since(start))
	return nil
}

// convertOptions is the command line of "cpm convert".
type convertOptions struct {
	images, labels string   // --idx-images, --idx-labels
	inputs         []string // the positional INPUT
	out            string
	compression    string
	batchRows      int
	lim            *inputLimits
	cols           *convertColumnFlags // --arrow-compression, --parquet-pages
	idx            bool                // reading MNIST idx files
	oneVsRest      bool                // --digit given
	digit          int                 // --digit
	format         reader.Format       // OUT's format
}

// parseConvert parses and checks the command line of "cpm convert", OUT
// included, before any input is read.
func parseConvert(args []string, stderr io.Writer) (*convertOptions, error) {
	fs := newFlags("convert", stderr, convertUsage)
	o := &convertOptions{}
	fs.StringVar(&o.images, "idx-images", "", "MNIST idx3 image `file`, e.g. train-images-idx3-ubyte[.gz]")
	fs.StringVar(&o.labels, "idx-labels", "", "MNIST idx1 label `file`, e.g. train-labels-idx1-ubyte[.gz]")
	digit := fs.String("digit", "", "one digit `D` in 0..9 against the rest: label D becomes +1, every other label -1 (default: keep the labels)")
	fs.StringVar(&o.out, "o", "", "output `file` (.arrow, .arrows, .parquet, .cpmcache, or LIBSVM: .zst, .gz, plain; - for standard output)")
	fs.StringVar(&o.compression, "compression", "", "`codec` of Parquet column chunks (zstd, the default, snappy, none) or Arrow bodies (none, the default, lz4, zstd; as --arrow-compression). LIBSVM output is compressed by its extension")
	o.cols = addConvertColumnFlags(fs)
	fs.IntVar(&o.batchRows, "batch-rows", 0, "`rows` per Arrow record batch or Parquet row group (default 65536)")
	o.lim = addLimitFlags(fs)
	var err error
	if o.inputs, err = parseInterspersed(fs, args); err != nil {
		return nil, err
	}
	o.idx = o.images != "" || o.labels != ""
	switch {
	case o.out == "":
		return nil, usagef("no output: -o OUT is required")
	case o.idx && (o.images == "" || o.labels == ""):
		return nil, usagef("--idx-images and --idx-labels go together")
	case o.idx && len(o.inputs) > 0:
		return nil, usagef("positional input %q given with --idx-images/--idx-labels", o.inputs[0])
	case !o.idx && len(o.inputs) != 1:
		return nil, usagef("want --idx-images and --idx-labels, or exactly one INPUT; got %d inputs", len(o.inputs))
	case o.batchRows < 0:
		return nil, usagef("--batch-rows %d: want a positive number of rows", o.batchRows)
	}
	o.oneVsRest = *digit != ""
	o.digit, err = strconv.Atoi(*digit)
	if o.oneVsRest && (err != nil || o.digit < 0 || o.digit > 9) {
		return nil, usagef("--digit %q: want a digit 0..9", *digit)
	}
	o.format = reader.FormatForOutput(o.out)
	if o.out == "-" {
		o.format = reader.LIBSVM
	}
	if err := o.cols.apply(o.format, &o.compression); err != nil {
		return nil, err
	}
	if err := checkCompression(o.format, o.compression); err != nil {
		return nil, err
	}
	return o, checkOutputs(outputPath{flag: "-o", path: o.out, stdout: true, inputs: append([]string{o.images, o.labels}, o.inputs...)})
}

// openInput opens the rows to convert: the MNIST idx files as one block,
// or INPUT block by block.
func (o *convertOptions) openInput(ctx context.Context) (reader.BlockReader, error) {
	if !o.idx {
		src, err := openBlocks(o.inputs[0], reader.DefaultBatchRows, o.lim.opts(ctx)...)
		if err != nil {
			return nil, fmt.Errorf("reading input: %w", err)
		}
		return src, nil
	}
	m, err := reader.LoadIDX(o.images, o.labels)
	if err != nil {
		return nil, fmt.Errorf("reading input: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &oneBlock{m: m}, nil
}

// summary prints convert's one-line summary: the counts, the digit split,
// OUT's format and size, and the time taken.
func (o *convertOptions) summary(stderr io.Writer, dst reader.BlockWriter, n convertCounts, took time.Duration) {
	var size int64
	if sb, ok := dst.(*stdoutBlocks); ok {
		size = sb.cw.N()
	} else if fi, err := os.Stat(o.out); err == nil {
		size = fi.Size()
	}
	fmt.Fprintf(stderr, "convert: %d rows, %d nonzeros, dim %d", n.rows, n.nnz, n.dim)
	if o.oneVsRest {
		fmt.Fprintf(stderr, ", digit %d vs rest: %d positive, %d negative", o.digit, n.positives, n.rows-n.positives)
	}
	fmt.Fprintf(stderr, " -> %s (%s), %d bytes, %.2fs\n", o.out, o.format, size, took.Seconds())
}

// parseInterspersed parses args allowing flags after positional arguments
// ("cpm convert in.libsvm -o out.zst", "cpm cv DATA -k 3"), which
// flag.Parse alone does not.
// Everything after "--" is positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parse(fs, args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if k := len(args) - len(rest); k > 0 && args[k-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// oneBlock is a BlockReader over one CSR held in memory.
type oneBlock struct {
	m    *sparsevec.CSR
	done bool
}

func (o *oneBlock) Next() (*sparsevec.CSR, error) {
	if o.done {
		return nil, io.EOF
	}
	o.done = true
	return o.m, nil
}

func (o *oneBlock) Release(*sparsevec.CSR) {}
func (o *oneBlock) Close() error           { return nil }

// stdoutBlocks is a BlockWriter of LIBSVM text to standard output (or the
// writer the tests give). Abort cannot take back what was written.
type stdoutBlocks struct {
	cw *iocount.Writer
	w  *libsvm.Writer
}

func (s *stdoutBlocks) Write(b *sparsevec.CSR) error {
	for r := range b.Rows() {
		if err := s.w.Write(b.Labels[r], b.Row(r)); err != nil {
			return err
		}
	}
	return nil
}

func (s *stdoutBlocks) Close() error {
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("writing standard output: %w", err)
	}
	return nil
}

func (s *stdoutBlocks) Abort() {}

// convertOutput creates the block writer of convert's output out: standard
// output for "-", the row cache (recording source's identity, so that
// train --cache OUT -t SOURCE takes it; "" records none) or a LIBSVM,
// Arrow or Parquet file that is discarded if ctx is cancelled before it is
// complete.
func convertOutput(ctx context.Context, out string, format reader.Format, source, compression string, batchRows int, stdout io.Writer, lim *inputLimits, extra ...reader.Option) (reader.BlockWriter, error) {
	switch {
	case out == "-":
		cw := &iocount.Writer{W: stdout}
		return &stdoutBlocks{cw: cw, w: libsvm.NewWriter(cw)}, nil
	case format == reader.Cache:
		return rowcache.Create(out, source, lim.opts(ctx)...)
	}
	return reader.CreateBlocks(out, append([]reader.Option{reader.WithCompression(compression), reader.WithBatchRows(batchRows), reader.WithContext(ctx)}, extra...)...)
}

// convertCounts are what convert reports of the rows it copied.
type convertCounts struct{ rows, nnz, dim, positives int }

// copyBlocks copies every block of src to dst (named out in errors), with
// the labels made digit-vs-rest (+1 for digit, -1 otherwise) when
// oneVsRest, until src ends or ctx is cancelled.
func copyBlocks(ctx context.Context, src reader.BlockReader, dst reader.BlockWriter, out string, oneVsRest bool, digit int) (convertCounts, error) {
	var n convertCounts
	var relabeled sparsevec.CSR
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		b, err := src.Next()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("reading input: %w", err)
		}
		n.rows, n.nnz, n.dim = n.rows+b.Rows(), n.nnz+b.NNZ(), max(n.dim, b.Dim)
		w := b
		if oneVsRest {
			// Blocks are read-only (they may alias the input's buffers):
			// relabel a shallow copy.
			scratch := relabeled.Labels[:0]
			relabeled = *b
			relabeled.Labels = scratch
			for _, y := range b.Labels {
				if y == float32(digit) {
					relabeled.Labels = append(relabeled.Labels, 1)
					n.positives++
				} else {
					relabeled.Labels = append(relabeled.Labels, -1)
				}
			}
			w = &relabeled
		}
		err = dst.Write(w)
		src.Release(b)
		if err != nil {
			return n, fmt.Errorf("writing %s: %w", out, err)
		}
	}
}

// checkCompression checks convert's --compression value (or "") for an
// output of the given format.
func checkCompression(format reader.Format, compression string) error {
	if compression == "" {
		return nil
	}
	names, ok := compressionsFor[format]
	switch {
	case format == reader.Cache:
		return usagef("--compression %q: the cache format is not compressed", compression)
	case !ok:
		return usagef("--compression %q: %s output is compressed by its extension (.zst, .gz), not by --compression", compression, format)
	case !slices.Contains(names, compression):
		return usagef("--compression %q: want one of %s for %s output", compression, strings.Join(names, ", "), format)
	}
	return nil
}
