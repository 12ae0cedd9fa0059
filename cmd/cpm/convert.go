package main

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/sparsevec"
)

const convertUsage = `cpm convert --idx-images FILE --idx-labels FILE [--digit D] -o OUT
       cpm convert INPUT [--digit D] -o OUT

Converts the MNIST idx image and label files (plain or gzip/zstd/bzip2-
compressed) to LIBSVM text: feature 1+row*cols+col = pixel/255, zero pixels
omitted, label = the digit. With one LIBSVM INPUT instead, rewrites it, e.g.
to recompress. OUT is compressed by its extension: .zst zstd, .gz gzip,
anything else plain; "-" writes plain text to standard output. OUT appears
only once complete (written to a temporary file, then renamed).`

// runConvert implements "cpm convert". It prints a one-line summary to
// stderr and writes data to stdout only when OUT is "-".
func runConvert(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("convert", stderr, convertUsage)
	images := fs.String("idx-images", "", "MNIST idx3 image `file`, e.g. train-images-idx3-ubyte[.gz]")
	labels := fs.String("idx-labels", "", "MNIST idx1 label `file`, e.g. train-labels-idx1-ubyte[.gz]")
	digit := fs.String("digit", "", "one digit `D` in 0..9 against the rest: label D becomes +1, every other label -1 (default: keep the labels)")
	out := fs.String("o", "", "output `file` (.zst, .gz, plain; - for standard output)")
	inputs, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}

	idx := *images != "" || *labels != ""
	switch {
	case *out == "":
		return usagef("no output: -o OUT is required")
	case idx && (*images == "" || *labels == ""):
		return usagef("--idx-images and --idx-labels go together")
	case idx && len(inputs) > 0:
		return usagef("positional input %q given with --idx-images/--idx-labels", inputs[0])
	case !idx && len(inputs) != 1:
		return usagef("want --idx-images and --idx-labels, or exactly one LIBSVM input; got %d inputs", len(inputs))
	}
	oneVsRest := *digit != ""
	d, err := strconv.Atoi(*digit)
	if oneVsRest && (err != nil || d < 0 || d > 9) {
		return usagef("--digit %q: want a digit 0..9", *digit)
	}

	start := time.Now()
	var m *sparsevec.CSR
	if idx {
		m, err = reader.LoadIDX(*images, *labels)
	} else {
		m, err = reader.Load(inputs[0])
	}
	if err != nil {
		return fmt.Errorf("reading input: %w", err)
	}
	positives := 0
	if oneVsRest {
		for i, y := range m.Labels {
			if y == float32(d) {
				m.Labels[i] = 1
				positives++
			} else {
				m.Labels[i] = -1
			}
		}
	}

	size, err := convertWrite(m, *out, stdout)
	if err != nil {
		return err
	}

	fmt.Fprintf(stderr, "convert: %d rows, %d nonzeros, dim %d", m.Rows(), m.NNZ(), m.Dim)
	if oneVsRest {
		fmt.Fprintf(stderr, ", digit %d vs rest: %d positive, %d negative", d, positives, m.Rows()-positives)
	}
	fmt.Fprintf(stderr, " -> %s, %d bytes, %.2fs\n", *out, size, time.Since(start).Seconds())
	return nil
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

// convertWrite writes m as LIBSVM text to path (see reader.CreateCompressed;
// "-" is stdout, uncompressed) and returns the number of bytes written.
// Errors name the path.
func convertWrite(m *sparsevec.CSR, path string, stdout io.Writer) (int64, error) {
	if path == "-" {
		cw := &convertCounter{w: stdout}
		if err := convertRows(reader.NewWriter(cw), m); err != nil {
			return cw.n, fmt.Errorf("writing standard output: %w", err)
		}
		return cw.n, nil
	}
	f, err := reader.CreateCompressed(path) // errors name the path
	if err != nil {
		return 0, err
	}
	defer f.Abort() // removes the temporary file unless Close succeeded
	if err := convertRows(reader.NewWriter(f), m); err != nil {
		return 0, fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return 0, err
	}
	return f.Written(), nil
}

// convertRows writes every row of m to w and flushes it.
func convertRows(w *reader.Writer, m *sparsevec.CSR) error {
	for r := range m.Rows() {
		if err := w.Write(m.Labels[r], m.Row(r)); err != nil {
			return err
		}
	}
	return w.Flush()
}

// convertCounter counts the bytes written through it.
type convertCounter struct {
	w io.Writer
	n int64
}

func (c *convertCounter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
