package main

import (
	"bytes"
	"fmt"
	"io"

	"github.com/polyhedral/cpm/input"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/sparsevec"
)

// Every data path of every command (-t, -c, --valid, DATA, INPUT) is
// interpreted by input.Resolve: one file in any format, "-" for standard
// input in any format, a shard directory, a directory of files or a glob.

// openBlocks opens one pass over the data at path (input.Resolve):
// several files are read one after the other.
func openBlocks(path string, blockRows int, opts ...reader.Option) (reader.BlockReader, error) {
	src, err := input.Resolve(path)
	if err != nil {
		return nil, err
	}
	return src.OpenBlocks(blockRows, 0, opts...)
}

// loadData reads the data at path (input.Resolve) into memory: several
// files are appended in their order.
func loadData(path string, opts ...reader.Option) (*sparsevec.CSR, error) {
	m, _, err := input.Load(path, input.Config{}, opts...)
	return m, err
}

// noteData writes to w, when path names several files, the line saying
// how many and in which order, e.g.
//
//	cpm: -t data/: 12 files (sorted by path; _ and . names skipped)
//
// flag names the flag that gave path ("" for a positional argument). A
// path that does not resolve is left to the command's reading to report.
// For one Arrow or Parquet file it writes the line of noteLayout instead
// (with opts, the reader options of the command).
func noteData(w io.Writer, flag, path string, opts []reader.Option) {
	if !input.IsShardSet(path) {
		noteLayout(w, path, opts)
		return
	}
	src, err := input.Resolve(path)
	if err != nil {
		return
	}
	if flag != "" {
		flag += " "
	}
	fmt.Fprintf(w, "cpm: %s%s\n", flag, src.Describe())
}

// reportTo is where a command prints its report (an error rate, a table):
// stdout, unless one of outs is "-", an output written to standard output,
// which then carries that data alone while the report goes to stderr.
func reportTo(stdout, stderr io.Writer, outs ...string) io.Writer {
	for _, o := range outs {
		if o == "-" {
			return stderr
		}
	}
	return stdout
}

// saveModel writes m to path by the rules of model.Save, or for "-" to
// stdout: encoded in memory first, so that a failed encoding writes
// nothing.
func saveModel(path string, m *model.Model, stdout io.Writer) error {
	if path != "-" {
		return model.Save(path, m)
	}
	var buf bytes.Buffer
	if err := model.Write(&buf, m); err != nil {
		return fmt.Errorf("save model: %w", err)
	}
	if _, err := stdout.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("writing the model to standard output: %w", err)
	}
	return nil
}
