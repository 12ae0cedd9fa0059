package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/polyhedral/cpm/learner"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sgd"
)

// defaultCheckpointEvery is the snapshot interval of --checkpoint without
// --checkpoint-every.
const defaultCheckpointEvery = time.Minute

// checkpointFlags are train's warm-start and checkpoint flags.
type checkpointFlags struct {
	init       string
	checkpoint string
	every      everyFlag
	resume     string
	maxMemory  int64 // --max-memory: the limit of the --init model's weights and the --resume file's size
}

func addCheckpointFlags(fs *flag.FlagSet) *checkpointFlags {
	c := &checkpointFlags{every: everyFlag{d: defaultCheckpointEvery}}
	fs.StringVar(&c.init, "init", "", "cpm: warm start: continue training the cpm model in `file` (same K, sides, labels, bias and scaling; new features start at zero; its SGD step count carries on). Without --lambda and -C it keeps the model's lambda; with -C, lambda = 1/(C*T) with this run's -i")
	fs.StringVar(&c.checkpoint, "checkpoint", "", "cpm, in-memory data: write checkpoints of the training state to `file` (atomically), also on SIGINT/SIGTERM; continue with --resume")
	fs.Var(&c.every, "checkpoint-every", "with --checkpoint: snapshot each polytope every `N` SGD steps, or at a time interval such as 30s or 5m")
	fs.StringVar(&c.resume, "resume", "", "cpm: continue the run that wrote checkpoint `file`; give the same flags and data as that run (the final model is byte-identical to an uninterrupted run)")
	return c
}

// apply checks the flags against the rest of the command line o and sets
// them in o's learner: it loads the initial model and the checkpoint to
// resume.
func (c *checkpointFlags) apply(o *trainOptions, stderr io.Writer) error {
	stream, quiet := o.stream, o.quiet
	if c.init == "" && c.checkpoint == "" && c.resume == "" {
		return nil
	}
	var used []string
	for _, f := range []struct{ name, v string }{{"--init", c.init}, {"--checkpoint", c.checkpoint}, {"--resume", c.resume}} {
		if f.v != "" {
			used = append(used, f.name)
		}
	}
	flags := strings.Join(used, ", ")
	if o.spec.Name != learner.CPM {
		return usagef("%s: supported for --learner cpm only, not %s", flags, o.describe)
	}
	if len(o.ks) > 1 {
		return usagef("%s: give one K, not a list to choose from", flags)
	}
	if stream && (c.checkpoint != "" || c.resume != "") {
		return usagef("--checkpoint and --resume need the data in memory: a --stream run cannot be resumed exactly (its shuffle buffer and input position are not saved); drop --stream")
	}
	if c.init != "" {
		m, err := model.LoadLimit(c.init, c.maxMemory)
		if err != nil {
			return fmt.Errorf("--init: %w", err)
		}
		if m.Learner != learner.CPM {
			return fmt.Errorf("--init %s: the model was trained by %s; a warm start needs a cpm model", c.init, m.Learner)
		}
		if stream && m.Scale != nil {
			return usagef("--init %s: the model was trained with --scale %s, and --stream trains on rows as they are; continue it without --stream", c.init, m.Scale.Mode)
		}
		o.cpm.Init = m
		if m.Sides == 2 && !o.cpm.SingleSided {
			o.cpm.DoubleSided = true // a warm start continues both polytopes
		}
		if o.cpm.Lambda == 0 && o.cpm.C == 0 {
			o.cpm.Lambda = m.Lambda // with neither --lambda nor -C, continue the same objective
		}
		if o.cpm.Lambda == 0 {
			t := o.cpm.Iterations
			if t == 0 {
				t = 10_000_000
			}
			if l := 1 / (o.cpm.C * float64(t)); l != m.Lambda {
				fmt.Fprintf(stderr, "cpm train: note: --init without --lambda: this run uses lambda = 1/(C*T) = %g, the initial model was trained with %g; add --lambda %g to keep its objective\n", l, m.Lambda, m.Lambda)
			}
		}
	}
	if c.checkpoint != "" {
		o.cpm.Checkpoint.Path = c.checkpoint
		o.cpm.Checkpoint.Every, o.cpm.Checkpoint.Interval = c.every.n, c.every.d
	}
	if c.resume != "" {
		ck, err := sgd.LoadCheckpointLimit(c.resume, c.maxMemory)
		if err != nil {
			return fmt.Errorf("--resume: %w", err)
		}
		o.cpm.Checkpoint.Resume = ck
		if !quiet {
			done, total := ck.Progress()
			fmt.Fprintf(stderr, "resuming from checkpoint %s: %d of %d steps done\n", c.resume, done, total)
		}
	}
	return nil
}

// interrupted adds, to a training error that is a cancellation (SIGINT,
// SIGTERM) of a run writing checkpoints, a message on stderr saying how to
// resume: the command line args of train with --resume FILE.
func (c *checkpointFlags) interrupted(err error, args []string, stderr io.Writer) error {
	if c.checkpoint == "" || !errors.Is(err, context.Canceled) {
		return err
	}
	ck, lerr := sgd.LoadCheckpoint(c.checkpoint)
	if lerr != nil {
		fmt.Fprintf(stderr, "cpm train: interrupted before a checkpoint could be written (%v)\n", lerr)
		return err
	}
	done, total := ck.Progress()
	fmt.Fprintf(stderr, "cpm train: interrupted; checkpoint %s saved (%d of %d steps done).\nTo continue, run the same command with --resume %s added:\n  %s\n",
		c.checkpoint, done, total, c.checkpoint, resumeCommand(args, c.checkpoint))
	return err
}

// resumeCommand returns the train command line args with any --resume
// flag replaced by --resume path, quoted for a POSIX shell.
func resumeCommand(args []string, path string) string {
	out := []string{"cpm", "train"}
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && name == "resume" {
			if !hasValue {
				i++ // skip the value
			}
			continue
		}
		out = append(out, shellQuote(a))
	}
	return strings.Join(append(out, "--resume", shellQuote(path)), " ")
}

// shellQuote quotes s for a POSIX shell if it needs quoting.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./,:=+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// everyFlag is --checkpoint-every: a number of steps or a duration.
type everyFlag struct {
	n int64
	d time.Duration
}

func (e *everyFlag) String() string {
	if e.n > 0 {
		return strconv.FormatInt(e.n, 10)
	}
	return e.d.String()
}

func (e *everyFlag) Set(s string) error {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 1 {
			return fmt.Errorf("%d steps: want >= 1", n)
		}
		e.n, e.d = n, 0
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return fmt.Errorf("%q is neither a number of steps nor a positive duration such as 30s", s)
	}
	e.n, e.d = 0, d
	return nil
}

var _ flag.Value = (*everyFlag)(nil)
