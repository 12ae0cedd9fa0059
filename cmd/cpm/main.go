// Command cpm trains and applies polyhedral classifiers on large sparse
// data: the Convex Polytope Machine (Kantchelian et al., NIPS 2014) and,
// over time, its relatives.
//
// Usage:
//
//	cpm train   -t TRAIN [-c TEST] -o MODEL [flags]   train (and optionally test)
//	cpm predict -m MODEL -c DATA [-s SCORES]          score rows
//	cpm eval    -m MODEL [--json F] DATA              error rate, confusion, face counts
//	cpm export  -m MODEL [-o TEXT]                    readable text dump of a model
//	cpm convert IN -o OUT                             any format -> any format (LIBSVM, Arrow, Parquet)
//	cpm shard   -n N --shuffle IN OUTDIR              shuffled shards of an input larger than memory
//	cpm gen     NAME -o OUT                           generated data at the papers' scale
//	cpm bench   seeds | cpm-table                     the papers' tables, ours beside theirs
//
// Run `cpm COMMAND -h` for a command's flags. Exit status: 0 success,
// 1 error while working (bad input data, I/O), 2 usage error, 130 interrupted.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// usageError marks errors in the command line itself (exit status 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

const topUsage = `cpm: Convex Polytope Machine trainer

usage:
  cpm train   -t TRAIN [-c TEST] -o MODEL [flags]   train (and optionally test) a model
  cpm predict -m MODEL -c DATA [-s SCORES]          score rows with a model
  cpm eval    -m MODEL [--json FILE] DATA           error rate, confusion matrix, face counts
  cpm export  -m MODEL [-o TEXT]                    readable text dump of a model
  cpm convert --idx-images F --idx-labels F [--digit D] -o OUT
                                                    MNIST idx files -> LIBSVM (.zst/.gz/plain)
  cpm convert IN -o OUT                             between LIBSVM(.zst/.gz/plain), Arrow (.arrow,
                                                    .arrows) and Parquet (.parquet)
  cpm cv      [--learner NAME] [-r R] [-f F] [--scale01] DATA
                                                    repeated stratified k-fold cross-validation
  cpm gen     NAME [--rows N] [--seed S] -o OUT     generated data (cpm gen --help lists the names)
  cpm shard   -n N [--shuffle --seed S] IN OUTDIR   split data into N compressed shards
  cpm bench   seeds [--data DIR]                    the seed papers' tables, side by side
  cpm bench   cpm-table [--runs R]                  the CPM paper's Table 1 and one-vs-one MNIST

Learners (cpm train --learner NAME): cpm (default), perceptron, kperceptron,
polyceptron-online, polyceptron-batch, plume, spla1.

Data files are LIBSVM text, plain or zstd/gzip/bzip2-compressed (detected
from the content); "-" reads standard input. Run "cpm COMMAND -h" for flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one cpm command and returns the process exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, topUsage)
		return 2
	}
	var err error
	switch cmd, rest := args[0], args[1:]; cmd {
	case "train":
		err = runTrain(ctx, rest, stdout, stderr)
	case "predict":
		err = runPredict(ctx, rest, stdout, stderr)
	case "eval":
		err = runEval(ctx, rest, stdout, stderr)
	case "export":
		err = runExport(rest, stdout, stderr)
	case "convert":
		err = runConvert(rest, stdout, stderr)
	case "cv":
		err = runCV(ctx, rest, stdout, stderr)
	case "gen":
		err = runGen(rest, stdout, stderr)
	case "shard":
		err = runShard(ctx, rest, stdout, stderr)
	case "bench":
		err = runBench(ctx, rest, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, topUsage)
		return 0
	default:
		fmt.Fprintf(stderr, "cpm: unknown command %q\n\n%s", cmd, topUsage)
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, new(usageError)):
		fmt.Fprintf(stderr, "cpm %s: %v\n", args[0], err)
		return 2
	case errors.Is(err, context.Canceled):
		fmt.Fprintf(stderr, "cpm %s: interrupted\n", args[0])
		return 130
	default:
		fmt.Fprintf(stderr, "cpm %s: %v\n", args[0], err)
		return 1
	}
}

// newFlags returns a flag set that reports errors instead of exiting.
func newFlags(name string, stderr io.Writer, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s\n\nflags (a flag may be given with - or --):\n", usage)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses args, turning flag errors into usage errors.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	return nil
}
