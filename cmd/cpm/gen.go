package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/synth"
)

const genUsage = "cpm gen NAME [--rows N] [--seed S] -o OUT   (NAME: polyceptron-d1, polyceptron-d2)"

func runGen(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			fmt.Fprintf(stdout, "usage: %s\n", genUsage)
			return nil
		}
		return usagef("name the data set first: %s", genUsage)
	}
	ds, err := synth.Lookup(args[0])
	if err != nil {
		return usageError{err}
	}
	fs := newFlags("gen", stderr, genUsage)
	var (
		rows = fs.Int("rows", ds.Rows, "number of rows")
		seed = fs.Uint64("seed", 1, "random seed: the same seed gives byte-identical output")
		out  = fs.String("o", "", "output `file` (.zst/.gz compress; - for stdout)")
	)
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if *out == "" {
		return usagef("give -o OUT")
	}
	if *rows < 1 {
		return usagef("--rows %d: want >= 1", *rows)
	}
	f, err := reader.CreateCompressed(*out)
	if err != nil {
		return err
	}
	defer f.Abort() // removes the partial output unless Close succeeded
	if err := ds.Write(f, *rows, *seed); err != nil {
		return err
	}
	return f.Close()
}
