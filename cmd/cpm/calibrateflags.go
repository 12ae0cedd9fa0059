package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/polyhedral/cpm/learner"
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/reader"
	"github.com/polyhedral/cpm/sparsevec"
)

// calibrateFlags are train's --calibrate, --calibrate-fraction and
// --calibrate-on: a Platt calibration of the model's decision values
// (learner.Calibrate), stored in the model.
type calibrateFlags struct {
	on       bool
	fraction float64
	file     string
	held     *sparsevec.CSR // the held-out rows (set by split), or nil
}

func addCalibrateFlags(fs *flag.FlagSet) *calibrateFlags {
	c := &calibrateFlags{}
	fs.BoolVar(&c.on, "calibrate", false, "fit Platt's sigmoid from decision values to probabilities on held-out training rows (--calibrate-fraction) and store it in the model, for predict --proba and eval's log-loss (every learner but plume and spla1, whose probabilities are their own)")
	fs.Float64Var(&c.fraction, "calibrate-fraction", 0.1, "with --calibrate: the `fraction` of the training rows held out (stratified by label, seeded by --seed) to fit the calibration on; the model trains on the rest")
	fs.StringVar(&c.file, "calibrate-on", "", "fit the calibration on the rows of this `file` instead, and train on every training row (implies --calibrate)")
	return c
}

func (c *calibrateFlags) active() bool { return c.on || c.file != "" }

// holdout reports whether the calibration rows come out of the training
// rows.
func (c *calibrateFlags) holdout() bool { return c.on && c.file == "" }

// check refuses what the flags do not support, before any data is read.
func (c *calibrateFlags) check(o *trainOptions) error {
	switch {
	case !c.active():
		return nil
	case o.spec.NativeProbabilities():
		return usagef("--calibrate: %s gives probabilities of its own (predict --proba); a calibration does not apply", o.describe)
	case !(c.fraction > 0 && c.fraction < 1):
		return usagef("--calibrate-fraction %v: want a fraction between 0 and 1", c.fraction)
	case c.holdout() && o.stream:
		return usagef("--calibrate holds out rows of the data in memory; with --stream give --calibrate-on FILE")
	}
	if err := checkInputs([2]string{"--calibrate-on", c.file}); err != nil {
		return err
	}
	return checkOutputs(outputPath{flag: "-o", path: o.modelOut, inputs: []string{c.file}})
}

// split, with --calibrate and no --calibrate-on, holds out the
// calibration rows of *data, which it replaces by the rows to train on.
func (c *calibrateFlags) split(data **sparsevec.CSR, seed uint64, stderr io.Writer, quiet bool) error {
	if !c.holdout() {
		return nil
	}
	train, held, err := learner.CalibrationSplit(*data, c.fraction, seed)
	if err != nil {
		return err
	}
	if !quiet {
		fmt.Fprintf(stderr, "calibration: holding out %d of %d rows, training on %d\n", held.Rows(), (*data).Rows(), train.Rows())
	}
	*data, c.held = train, held
	return nil
}

// calibrationReport is the part of train's --json record that a
// calibration adds.
type calibrationReport struct {
	Calibration *calibrationMetrics `json:"calibration,omitempty"`   // --calibrate, --calibrate-on
	TestLogLoss *float64            `json:"test_log_loss,omitempty"` // with -c TEST: mean log-loss of the calibrated probabilities
}

// reportTestLogLoss prints and records the log-loss of a calibrated
// model's probabilities on train's -c TEST.
func reportTestLogLoss(stdout io.Writer, m *model.Model, res *evalResult, met *trainMetrics) {
	if q := quality(m, res, res.acc); q.LogLoss != nil {
		met.TestLogLoss = q.LogLoss
		fmt.Fprintf(stdout, "test log-loss %.4f (calibrated probabilities)\n", *q.LogLoss)
	}
}

// calibrationMetrics is the --json record of a calibration.
type calibrationMetrics struct {
	Method  string    `json:"method"`            // "platt"
	Rows    int64     `json:"rows"`              // rows it was fitted on
	Source  string    `json:"source"`            // "holdout" or the --calibrate-on file
	LogLoss float64   `json:"held_out_log_loss"` // mean log-loss on those rows
	A       []float64 `json:"a"`                 // per sigmoid: P = 1/(1 + exp(a·s + b))
	B       []float64 `json:"b"`
}

// fit fits the calibration of m on the held-out rows or the
// --calibrate-on file, stores it in m and reports it.
func (c *calibrateFlags) fit(m *model.Model, met *trainMetrics, stderr io.Writer, quiet bool, opts ...reader.Option) error {
	if !c.active() {
		return nil
	}
	rows, source := c.held, "holdout"
	if c.file != "" {
		var err error
		if rows, err = reader.Load(c.file, opts...); err != nil {
			return fmt.Errorf("--calibrate-on: %w", err)
		}
		source = c.file
	}
	cal, err := learner.Calibrate(m, rows)
	if err != nil {
		if c.file != "" {
			return fmt.Errorf("--calibrate-on %s: %w", c.file, err)
		}
		return err
	}
	m.Calibration = cal
	met.Calibration = &calibrationMetrics{Method: cal.Method, Rows: cal.Rows, Source: source, LogLoss: cal.LogLoss, A: cal.A, B: cal.B}
	if !quiet {
		fmt.Fprintf(stderr, "calibration: Platt's sigmoid fitted on %d rows (%s), held-out log-loss %.4f\n", cal.Rows, source, cal.LogLoss)
	}
	return nil
}
