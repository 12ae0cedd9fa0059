package main

import (
	"cmp"
	"slices"

	"github.com/polyhedral/cpm/calibrate"
	"github.com/polyhedral/cpm/learner"
	"github.com/polyhedral/cpm/model"
)

// rankedScore is one row's binary decision value and whether its true
// label is the positive class (Classes[0]), for the ROC AUC.
type rankedScore struct {
	score float32
	pos   bool
}

// metricsAcc accumulates, row by row, what eval's quality figures need
// beyond the confusion matrix: binary decision values (ROC AUC) and the
// log-loss of the true class's probability.
type metricsAcc struct {
	on       bool // gather; add does nothing when false
	m        *model.Model
	binary   bool
	ranked   []rankedScore // binary rows with a known label
	loss     float64       // Σ −log p(true class), rows with a known label
	lossRows int
	hasProba bool
}

func newMetricsAcc(m *model.Model) *metricsAcc {
	return &metricsAcc{m: m, binary: !learner.IsMulticlass(m)}
}

// add records one row: y its true label, scores its decision values,
// probs its class probabilities in Classes order (nil: none).
func (a *metricsAcc) add(y float32, scores []float32, probs []float64) {
	if !a.on {
		return
	}
	t := learner.ClassIndex(a.m, y)
	if t < 0 {
		return
	}
	if a.binary {
		a.ranked = append(a.ranked, rankedScore{scores[0], t == 0})
	}
	if probs != nil {
		a.hasProba = true
		a.loss += calibrate.LogLoss(probs[t])
		a.lossRows++
	}
}

// rocAUC returns the area under the ROC curve of the binary scores: the
// Mann–Whitney statistic (R₊ − n₊(n₊+1)/2)/(n₊·n₋), R₊ the sum of the
// positives' ranks among all scores in ascending order, tied scores
// sharing their average rank, so that a positive and a negative with the
// same score count 1/2. ok is false when either class has no row.
func rocAUC(rows []rankedScore) (auc float64, ok bool) {
	s := slices.Clone(rows)
	slices.SortFunc(s, func(a, b rankedScore) int { return cmp.Compare(a.score, b.score) })
	var npos, nneg, rankSum float64
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j].score == s[i].score {
			j++
		}
		avg := float64(i+1+j) / 2 // ranks i+1 .. j
		for _, r := range s[i:j] {
			if r.pos {
				npos++
				rankSum += avg
			} else {
				nneg++
			}
		}
		i = j
	}
	if npos == 0 || nneg == 0 {
		return 0, false
	}
	return (rankSum - npos*(npos+1)/2) / (npos * nneg), true
}

// classMetrics are one class's one-vs-rest figures, fractions in [0, 1].
type classMetrics struct {
	Label     float32 `json:"label"`
	Precision float64 `json:"precision"` // of the rows predicted this label, the fraction that have it (0 when none is)
	Recall    float64 `json:"recall"`    // of the rows with this label, the fraction predicted it (0 when none has it)
	F1        float64 `json:"f1"`        // 2PR/(P+R), 0 when P+R = 0
	Support   int64   `json:"support"`   // rows with this label
}

// qualityMetrics are eval --json's figures beyond the error and the
// confusion matrix.
type qualityMetrics struct {
	Accuracy      float64        `json:"accuracy"`                 // 1 − error
	PositiveLabel *float32       `json:"positive_label,omitempty"` // binary: the class precision, recall, F1 and AUC are of
	Precision     float64        `json:"precision"`                // binary: of positive_label; multiclass: mean over classes
	Recall        float64        `json:"recall"`
	F1            float64        `json:"f1"`
	PerClass      []classMetrics `json:"per_class"`
	ROCAUC        *float64       `json:"roc_auc,omitempty"`  // binary, from the decision values; omitted when a class has no row
	LogLoss       *float64       `json:"log_loss,omitempty"` // models with probabilities; mean over rows with a known label
}

// quality computes the figures of res and acc. The per-class figures
// follow res.classes (ascending labels); a row whose label the model
// does not know counts as a false positive of the class predicted.
func quality(m *model.Model, res *evalResult, acc *metricsAcc) qualityMetrics {
	q := qualityMetrics{Accuracy: 1 - res.errorRate()}
	n := len(res.classes)
	for i, c := range res.classes {
		var predicted, support int64
		for j := range n + 1 {
			predicted += res.confusion[j][i]
			support += res.confusion[i][j]
		}
		cm := classMetrics{Label: c, Support: support}
		tp := float64(res.confusion[i][i])
		if predicted > 0 {
			cm.Precision = tp / float64(predicted)
		}
		if support > 0 {
			cm.Recall = tp / float64(support)
		}
		if cm.Precision+cm.Recall > 0 {
			cm.F1 = 2 * cm.Precision * cm.Recall / (cm.Precision + cm.Recall)
		}
		q.PerClass = append(q.PerClass, cm)
	}
	if acc.binary {
		pos := m.Classes[0]
		q.PositiveLabel = &pos
		c := q.PerClass[res.classIndex(pos)]
		q.Precision, q.Recall, q.F1 = c.Precision, c.Recall, c.F1
		if auc, ok := rocAUC(acc.ranked); ok {
			q.ROCAUC = &auc
		}
	} else {
		for _, c := range q.PerClass {
			q.Precision += c.Precision / float64(n)
			q.Recall += c.Recall / float64(n)
			q.F1 += c.F1 / float64(n)
		}
	}
	if acc.hasProba && acc.lossRows > 0 {
		l := acc.loss / float64(acc.lossRows)
		q.LogLoss = &l
	}
	return q
}

// evalJSONHelp documents the fields of eval --json; cpm eval -h prints it.
const evalJSONHelp = `
--json fields (rates are fractions in [0, 1]):
  command, model, data      "eval", the model file, the data file
  rows, errors, error       rows scored, rows mislabelled, errors/rows
  accuracy                  1 - error
  labels                    the model's labels, ascending
  confusion                 [true][predicted] row counts, labels order
  face_assignment_counts    binary models with faces: rows of the first
                            label per face (omitted otherwise)
  rows_with_unknown_label   rows whose label the model does not know
                            (omitted when 0); false positives of the
                            label predicted, left out of AUC and log-loss
  positive_label            binary: the model's first class (the label of
                            positive decision values: cpm's outer label,
                            the perceptrons' positive label, the inside
                            label of polyceptron, plume and spla1), the
                            class precision, recall, f1 and roc_auc are of
  precision, recall, f1     binary: of positive_label; multiclass: the
                            unweighted mean over labels (macro average)
  per_class                 per label: label, precision, recall, f1,
                            support (rows with that label); a rate with
                            a zero denominator is 0
  roc_auc                   binary: area under the ROC curve of the
                            decision values, ties as average ranks
                            (Mann-Whitney); omitted when a class is absent
  log_loss                  models with probabilities (plume, spla1,
                            cpm train --calibrate): mean -ln p(true label),
                            p clipped to [1e-15, 1-1e-15]; omitted otherwise
`
