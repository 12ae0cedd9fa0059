package learner

import (
	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sparsevec"
)

// compactPredictor returns learner l's predictor of m. For a compact model
// (m.Rows set) whose learner does not take compact models itself, the
// learner's predictor gets a view of m over its scoring matrices
// (model.Model.ScoringWeights: the stored rows and a zero row, D =
// len(Rows) + 1), and each row's features are mapped to those rows first
// (model.RowMap), so that the matrices see the entries a dense model's
// see, in the same order, with the same weights: every score is the same
// bit for bit.
func compactPredictor(l *registration, m *model.Model) (Predictor, error) {
	if m.Rows == nil || l.compactRows {
		return l.newPredictor(m)
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	view := *m
	view.D, view.Rows, view.Weights = len(m.Rows)+1, nil, m.ScoringWeights()
	p, err := l.newPredictor(&view)
	if err != nil {
		return nil, err
	}
	rm := m.RowMap()
	var idx []uint32
	var val []float32
	return mapRows(p, func(x sparsevec.Vector) sparsevec.Vector {
		idx, val = rm.AppendRow(idx[:0], val[:0], x)
		return sparsevec.Vector{Idx: idx, Val: val}
	}), nil
}
