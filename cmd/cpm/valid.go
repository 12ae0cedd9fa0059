package main

import (
	"flag"
	"fmt"
	"io"
	"math"

	"github.com/polyhedral/cpm/cv"
	"github.com/polyhedral/cpm/learner"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/sgd"
	"github.com/polyhedral/cpm/sparsevec"
)

// validFlags are train's validation and early-stopping flags.
type validFlags struct {
	holdout   float64
	file      string
	every     int64
	earlyStop int
}

func addValidFlags(fs *flag.FlagSet) *validFlags {
	v := &validFlags{}
	fs.Float64Var(&v.holdout, "holdout", 0, "cpm: hold out this `fraction` of the training rows (stratified by label, seeded by --seed) for validation")
	fs.StringVar(&v.file, "valid", "", "cpm: validation `data` (any input format; a file, -, a directory or a glob, as -t); its error is shown in the progress table")
	fs.Int64Var(&v.every, "valid-every", 0, "with --holdout or --valid: SGD `steps` between evaluations of each polytope (default: --progress-every)")
	fs.IntVar(&v.earlyStop, "early-stop", 0, "with --holdout or --valid: stop a polytope after `N` evaluations without a lower validation error and keep its best weights (0: train all -i steps)")
	return v
}

func (v *validFlags) active() bool { return v.holdout != 0 || v.file != "" }

// check refuses combinations the flags do not support, before any data is
// read.
func (v *validFlags) check(spec learner.Spec, stream bool) error {
	switch {
	case v.holdout != 0 && v.file != "":
		return usagef("--holdout and --valid: give one source of validation rows")
	case v.holdout != 0 && !(v.holdout > 0 && v.holdout < 1):
		return usagef("--holdout %v: want a fraction between 0 and 1", v.holdout)
	case v.every < 0:
		return usagef("--valid-every %d: want >= 1 (or 0 for --progress-every)", v.every)
	case v.earlyStop < 0:
		return usagef("--early-stop %d: want >= 1 (or 0 for none)", v.earlyStop)
	case !v.active() && (v.every != 0 || v.earlyStop != 0):
		return usagef("--valid-every and --early-stop need validation rows: add --holdout FRACTION or --valid FILE")
	case !v.active():
		return nil
	case spec.Name != learner.CPM:
		return usagef("--holdout and --valid: supported for --learner cpm only for now")
	case stream && v.holdout != 0:
		return usagef("--holdout needs the data in memory; with --stream give a separate --valid FILE")
	}
	return nil
}

// load sets spec's validation rows: with --holdout it splits *data (which
// it replaces by the training part), with --valid it reads the file.
func (v *validFlags) load(spec *learner.Spec, data **sparsevec.CSR, stderr io.Writer, quiet bool, opts ...reader.Option) error {
	if !v.active() {
		return nil
	}
	var valid *sparsevec.CSR
	if v.holdout != 0 {
		train, held, err := cv.Holdout(*data, v.holdout, spec.CPM().Seed)
		if err != nil {
			return usagef("--holdout: %v", err)
		}
		*data, valid = train, held
		if !quiet {
			fmt.Fprintf(stderr, "held out %d of %d rows for validation\n", valid.Rows(), train.Rows()+valid.Rows())
		}
	} else {
		var err error
		if !quiet {
			noteData(stderr, "--valid", v.file, opts)
		}
		if valid, err = loadData(v.file, opts...); err != nil {
			return fmt.Errorf("--valid: %w", err)
		}
		if valid.Rows() == 0 {
			return fmt.Errorf("--valid %s: %w", v.file, sgd.ErrNoRows)
		}
		if !quiet {
			fmt.Fprintf(stderr, "loaded %s: %d validation rows\n", v.file, valid.Rows())
		}
	}
	spec.CPM().Valid = sgd.Validation{Data: valid, Every: v.every, Patience: v.earlyStop}
	return nil
}

// printKept prints what validation decided for one polytope.
func (v *validFlags) printKept(w io.Writer, p sgd.PolytopeReport) {
	if math.IsNaN(p.ValidError) {
		fmt.Fprintf(w, "%s: no validation rows of its classes\n", p.Task)
		return
	}
	how := "after the last step"
	switch {
	case p.Stopped:
		how = fmt.Sprintf("stopped early; kept the weights after step %d", p.ValidStep)
	case v.earlyStop > 0:
		how = fmt.Sprintf("kept the weights after step %d", p.ValidStep)
	}
	fmt.Fprintf(w, "%s: validation error %.3f%% (%s)\n", p.Task, 100*p.ValidError, how)
}

// modelError returns the fraction of the rows of data that m mislabels.
func modelError(m *model.Model, data *sparsevec.CSR) (float64, error) {
	return rowsError(m, data.Rows(), func(r int) (sparsevec.Vector, float32) { return data.Row(r), data.Labels[r] })
}

// packedError returns the fraction of the packed rows p that m mislabels.
func packedError(m *model.Model, p *sparsevec.Packed) (float64, error) {
	var buf sparsevec.Vector
	return rowsError(m, p.Rows(), func(r int) (sparsevec.Vector, float32) { return p.Row(r, &buf), p.Label(r) })
}

// rowsError returns the fraction of the n rows that m mislabels, row
// giving row r and its label.
func rowsError(m *model.Model, n int, row func(r int) (sparsevec.Vector, float32)) (float64, error) {
	pr, err := learner.NewPredictor(m)
	if err != nil {
		return 0, err
	}
	wrong := 0
	for r := range n {
		x, y := row(r)
		if got, _, _ := pr.Predict(x); got != y {
			wrong++
		}
	}
	return float64(wrong) / float64(n), nil
}
