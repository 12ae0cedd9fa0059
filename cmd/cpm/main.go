// Command cpm trains and applies polyhedral classifiers on large sparse
// data: the Convex Polytope Machine (Kantchelian et al., NIPS 2014), the
// perceptron family and PLUME.
//
// Usage:
//
//	cpm train   -t TRAIN [-c TEST] -o MODEL [flags]   train (and optionally test)
//	cpm predict -m MODEL -c DATA [-s SCORES]          score rows
//	cpm eval    -m MODEL [--json F] DATA              error rate, confusion, face counts
//	cpm export  -m MODEL [-o TEXT]                    readable text dump of a model
//	cpm convert IN -o OUT                             any format -> any format (LIBSVM, Arrow, Parquet, cache)
//	cpm shard   -n N --shuffle IN OUTDIR              shuffled shards of an input larger than memory
//	cpm gen     NAME -o OUT                           generated data at the papers' scale
//	cpm tune    --grid 'NAME=V1,V2 ...' DATA          hyperparameter search by CV or holdout
//	cpm bench   seeds | cpm-table                     the papers' tables, ours beside theirs
//	cpm inspect MODEL [--top N] [--data FILE]         what a model learned, face by face
//	cpm plot    regions | curve                       decision regions (2-D) or a training curve (PNG)
//	cpm worker  --nats URL [--concurrency N]          run tasks of distributed train, cv and tune jobs
//	cpm cluster serve | status | gc                   a NATS JetStream node; jobs, tasks and workers; deleting old jobs
//	cpm version                                       module version and build information
//
// Run `cpm COMMAND -h` for a command's flags. Exit status: 0 success,
// 1 any other error, 2 usage error (also an output path that may not be
// written: a directory, an input, a non-cache file as --cache), 3 bad
// input (data or model file), 4 I/O error (also a missing or unwritable
// output directory), 130 interrupted.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/polyhedral/cpm/cv"
	"github.com/polyhedral/cpm/input"
	"github.com/polyhedral/cpm/internal/atomicfile"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/plume"
	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/sgd"
	"github.com/polyhedral/cpm/shard"
	"github.com/polyhedral/cpm/synth"
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
                                                    .arrows), Parquet (.parquet) and the row
                                                    cache (.cpmcache)
  cpm cv      [--learner NAME] [-r R] [-f F] [--scale01] DATA
                                                    repeated stratified k-fold cross-validation
  cpm tune    --grid 'NAME=V1,V2 ...' [-r R -f F | --holdout FRAC | --valid F] [-o MODEL] DATA
                                                    hyperparameter search over a grid of learner
                                                    flags (or --protocol paper), by CV or holdout
  cpm gen     NAME [--rows N] [--seed S] -o OUT     generated data (cpm gen --help lists the names)
  cpm shard   -n N [--shuffle --seed S] IN OUTDIR   split data into N compressed shards
  cpm bench   seeds [--data DIR]                    the seed papers' tables, side by side
  cpm bench   cpm-table [--runs R]                  the CPM paper's Table 1 and one-vs-one MNIST
  cpm inspect MODEL [--top N] [--data F] [--json F] what was learned: faces, norms, biases, top
                                                    features, active faces, assignment counts
  cpm plot    regions --model M --data F -o OUT.png decision regions and faces of a 2-D model
  cpm plot    curve --log METRICS.jsonl -o OUT.png  training curve from cpm train --metrics-log
  cpm worker  --nats URL [--concurrency N] [--cache-dir DIR] [--data-root DIR]
                                                    run the tasks of train, cv and tune jobs submitted
                                                    with --nats URL, until interrupted
  cpm cluster serve [--listen HOST:PORT] [--store DIR] [--routes URL,...] [--name N]
                                                    a NATS server with JetStream (loopback unless
                                                    authenticated); clusters with other nodes
  cpm cluster status --nats URL                     jobs, their tasks by state, workers and their tasks
  cpm cluster gc --nats URL [--older-than 168h] [--job ID] [--dry-run]
                                                    delete finished jobs' records and results, and
                                                    data no job names
  cpm version                                       module version and build info (also --version)

Learners (cpm train --learner NAME): cpm (default), perceptron, kperceptron,
polyceptron-online, polyceptron-batch, plume, spla1.

Data (-t, -c, --valid, DATA, IN) is LIBSVM text, plain or zstd/gzip/bzip2-
compressed, Arrow IPC, Parquet or a row cache, detected from the content;
"-" reads standard input in any of these; a directory is a shard set (with a
SHARDS manifest) or its files found recursively, and a quoted glob its
matches: read one after the other sorted by path, names starting with . or
_ skipped (_SUCCESS, .crc, _delta_log), each file's format detected on its
own. Run "cpm COMMAND -h" for flags.

Exit status:
  0    success
  1    any other error (e.g. training refused the data's labels)
  2    usage error (bad command line: unknown command or flag, a flag value
       out of range, a missing argument), found before any data is read;
       also an output path that may not be written: a directory, block
       device or socket, one of the command's inputs, a --cache path
       holding a file that is not a cpm cache, two outputs naming one file
  3    bad input: a data file that does not parse, is corrupt, holds
       no rows, disagrees with its shard manifest or is rewritten during
       a --stream run; a model or checkpoint file that is not valid;
       input beyond a limit (--max-features, --max-line-bytes,
       --max-memory)
  4    I/O error: a file that cannot be opened, read or written (missing,
       permission denied, disk full), a directory or glob with no data file,
       the MNIST files cpm gen needs, an output whose directory does not
       exist or is not writable
  130  interrupted (SIGINT or SIGTERM)

Outputs (-o, -s, --json, --metrics-log, --checkpoint, --cpuprofile, --cache,
shard OUTDIR) are checked before any work starts. A regular file is replaced
atomically (temporary file .NAME.tmp-PID-RANDOM in the same directory,
fsync, rename, directory fsync; the old file's mode is kept), a symbolic
link's target is replaced and the link kept, a character device or FIFO is
written straight through, and "-" is standard output where a flag says so
(one output at most; a report the command would print there then goes to
standard error).
/dev/stdout writes to the open standard output. Temporaries left by killed
runs are removed by the next run that writes the same path.
`

// Exit statuses of run.
const (
	exitOK          = 0
	exitError       = 1
	exitUsage       = 2
	exitBadInput    = 3
	exitIO          = 4
	exitInterrupted = 130
)

// main runs the command with a context that the first SIGINT or SIGTERM
// cancels: every command then stops within seconds, removes its
// temporaries and exits 130. A second signal exits 130 at once, without
// that cleanup, for a command blocked where no context reaches (a system
// call such as opening a FIFO that no process reads).
func main() {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		cancel()
		<-sigs
		fmt.Fprintln(os.Stderr, "cpm: second signal: exiting without cleanup")
		os.Exit(exitInterrupted)
	}()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one cpm command and returns the process exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, topUsage+memoryUsage())
		return exitUsage
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
		err = runExport(ctx, rest, stdout, stderr)
	case "convert":
		err = runConvert(ctx, rest, stdout, stderr)
	case "cv":
		err = runCV(ctx, rest, stdout, stderr)
	case "tune":
		err = runTune(ctx, rest, stdout, stderr)
	case "gen":
		err = runGen(ctx, rest, stdout, stderr)
	case "shard":
		err = runShard(ctx, rest, stdout, stderr)
	case "bench":
		err = runBench(ctx, rest, stdout, stderr)
	case "inspect":
		err = runInspect(ctx, rest, stdout, stderr)
	case "plot":
		err = runPlot(ctx, rest, stdout, stderr)
	case "worker":
		err = runWorker(ctx, rest, stdout, stderr)
	case "cluster":
		err = runCluster(ctx, rest, stdout, stderr)
	case "version", "--version", "-version":
		err = runVersion(rest, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, topUsage+memoryUsage())
		return exitOK
	default:
		fmt.Fprintf(stderr, "cpm: unknown command %q\n\n%s", cmd, topUsage)
		return exitUsage
	}
	code := exitStatus(err)
	switch code {
	case exitOK:
	case exitInterrupted:
		fmt.Fprintf(stderr, "cpm %s: interrupted\n", args[0])
	default:
		fmt.Fprintf(stderr, "cpm %s: %v\n", args[0], err)
	}
	return code
}

// exitStatus maps the error of a command to the process exit status (see
// topUsage). Bad input is tested before I/O, so that a parse error that
// names its file is 3 while a failing open, read or write is 4.
func exitStatus(err error) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, new(usageError)),
		errors.Is(err, sgd.ErrCheckpointMismatch), errors.Is(err, sgd.ErrInitMismatch),
		errors.Is(err, atomicfile.ErrRefused):
		// A resume or warm start whose flags or data do not match, or an
		// output path naming something that may not be written (a
		// directory, an input, a file that is not a cache): the command
		// line is what is wrong.
		return exitUsage
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	case isBadInput(err):
		return exitBadInput
	case isIOError(err):
		return exitIO
	}
	return exitError
}

// isBadInput reports whether err says that a data or model file is
// malformed: a reader error of the reader.ErrBadInput class (a parse, row,
// schema or cache error that does not merely carry an I/O failure, or a
// corrupt file), a model file the model package (or a learner's loader)
// refuses, or a run or model beyond --max-memory.
func isBadInput(err error) bool {
	if errors.As(err, new(*model.FormatError)) ||
		errors.As(err, new(*sgd.CheckpointError)) {
		return true
	}
	for _, kind := range []error{
		reader.ErrBadInput, sgd.ErrNoRows, cv.ErrNoData, shard.ErrIncomplete, shard.ErrManifestMismatch, sgd.ErrMemoryLimit,
		model.ErrNotModel, model.ErrVersion, model.ErrTruncated, model.ErrChecksum, model.ErrCorrupt, model.ErrInvalid,
		plume.ErrModel, input.ErrInputChanged,
	} {
		if errors.Is(err, kind) {
			return true
		}
	}
	return false
}

// isIOError reports whether err comes from the operating system: a file
// that cannot be opened, read, written, synced or renamed.
func isIOError(err error) bool {
	return errors.As(err, new(*fs.PathError)) ||
		errors.As(err, new(*os.LinkError)) ||
		errors.As(err, new(*os.SyscallError)) ||
		errors.As(err, new(syscall.Errno)) ||
		errors.Is(err, io.ErrShortWrite) ||
		errors.Is(err, shard.ErrNoMatch) || // a glob naming no file: as a missing file
		errors.Is(err, synth.ErrNoMNIST) // the MNIST files gen needs: missing files
}

const versionUsage = "cpm version (or cpm --version)"

// runVersion prints the module path and version and the build information
// the Go toolchain recorded in the binary.
func runVersion(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("version", stderr, versionUsage)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	info, ok := debug.ReadBuildInfo()
	_, err := io.WriteString(stdout, versionText(info, ok))
	return err
}

// versionText renders build information: the main module's path and
// version, the Go version and platform, and the VCS revision, time and
// modified flag when the build recorded them.
func versionText(info *debug.BuildInfo, ok bool) string {
	if !ok || info == nil {
		return "cpm: no build information in this binary\n"
	}
	path, version := info.Main.Path, info.Main.Version
	if path == "" {
		path = info.Path
	}
	if version == "" {
		version = "(devel)"
	}
	text := fmt.Sprintf("cpm %s %s\n", path, version)
	var goos, goarch string
	vcs := map[string]string{}
	for _, s := range info.Settings {
		switch s.Key {
		case "GOOS":
			goos = s.Value
		case "GOARCH":
			goarch = s.Value
		case "vcs", "vcs.revision", "vcs.time", "vcs.modified":
			vcs[s.Key] = s.Value
		}
	}
	goVersion := info.GoVersion
	if goos != "" {
		goVersion += " " + goos + "/" + goarch
	}
	text += fmt.Sprintf("%-13s %s\n", "go", goVersion)
	for _, k := range []string{"vcs", "vcs.revision", "vcs.time", "vcs.modified"} {
		if v, ok := vcs[k]; ok {
			text += fmt.Sprintf("%-13s %s\n", k, v)
		}
	}
	return text
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

// flagSet reports whether the flag called name was given on fs's command
// line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// parse parses args, turning flag errors into usage errors.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{listHint(fs, err)}
	}
	return nil
}
