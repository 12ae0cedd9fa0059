package learner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/scale"
	"github.com/polyhedral/cpm/sgd"
	"github.com/polyhedral/cpm/sparsevec"
)

// Packable reports whether TrainPacked can train s: a CPM without feature
// hashing (neither s.HashBits nor a hashed initial model), checkpoints or
// a Runner, which need the training rows as a CSR.
func (s Spec) Packable() bool {
	if s.name() != CPM || s.HashBits != 0 {
		return false
	}
	c := config[CPMConfig](s.Config)
	if c.Init != nil && c.Init.Hash != nil {
		return false
	}
	return c.Checkpoint.Path == "" && c.Checkpoint.Resume == nil && c.Runner == nil
}

// Packing returns the encodings the CPM of s keeps its training rows in
// (sgd.Config.Compact): the Packing to append them to a Packer with for
// TrainPacked.
func (s Spec) Packing() sparsevec.Packing {
	return config[CPMConfig](s.Config).Compact.Packing()
}

// TrainPacked is Train of a Packable spec on the rows appended to rows,
// in file order: the rows are never held as one CSR. The scaling is
// fitted on the packed rows block by block (scale.FitBlocks) and applied
// to them block by block (Packer.MapEntries, in place when the scaling
// keeps zeros at zero; Packer.Map when it centres), and the CPM keeps its one shuffled
// copy in the Packer's memory (sgd.TrainPacked), so that a run holds about
// one copy of the rows. The model is byte for byte Train's on the same
// rows as a CSR. rows is empty afterwards.
//
// visit, if not nil, is a pass over the trained rows before they are
// released (sgd.TrainPacked). It gets the model without its scaling: the
// packed rows are scaled already, and scaling the packed rows again is
// what the returned model would do; a predictor of the model it gets
// (NewPredictor) scores a packed row as the returned model's scores the
// raw row, bit for bit (the predictor applies the scaling as
// scale.Scaler.AppendRow, as the Apply that scaled the rows does).
func TrainPacked(ctx context.Context, s Spec, rows *sparsevec.Packer, visit sgd.PackedVisit) (*model.Model, *Report, error) {
	start := time.Now()
	if !s.Packable() {
		return nil, nil, errors.New("learner: TrainPacked trains a CPM without feature hashing, checkpoints or a Runner")
	}
	l := mustLookup(CPM)
	if err := l.checkConfig(s.Config); err != nil {
		return nil, nil, err
	}
	sc, err := s.scaling(l, func(mode scale.Mode) (*scale.Scaler, error) { return scale.FitBlocks(mode, rows.Blocks()) })
	if err != nil {
		return nil, nil, err
	}
	if sc != nil {
		if sc.Centred() {
			rows.Map(sc.Apply)
		} else {
			// Zeros stay zeros: the rows are scaled where they lie.
			rows.MapEntries(sc.ScaleInPlace)
		}
		s.Config = l.rowsConfig(s.Config, sc.Apply)
	}
	c := cpmRun(s, rows.Rows())
	if c.OvO && s.Label != nil {
		return nil, nil, fmt.Errorf("learner: an outer label does not apply to one-vs-one training")
	}
	m, r, err := sgd.TrainPacked(ctx, c.Config, rows, s.Label, c.OvO, visit)
	if err != nil {
		return nil, nil, err
	}
	rep := &Report{Learner: CPM, CPM: r, Hyperplanes: len(m.Weights) * m.K, Scale: scale.None}
	if sc != nil {
		m.Scale, rep.Scale = sc.Model(), sc.Mode()
	}
	rep.Seconds = time.Since(start).Seconds()
	return m, rep, nil
}
