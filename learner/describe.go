package learner

import (
	"fmt"
	"strconv"

	"github.com/polyhedral/cpm/model"
)

// Description says how the models of a learner decide, for the reports of
// cpm inspect, plot and eval.
type Description struct {
	Rule        string       // the decision rule
	FaceRule    string       // which face a row is assigned to
	FaceNoun    string       // "face", "hyperplane", "expert"
	FaceArgmin  bool         // a row goes to the face of smallest score (else largest)
	FaceClasses bool         // face k is class k (multiclass perceptron)
	Polytopes   bool         // weight matrices are CPM polytopes: sides and SGD settings apply
	Lift        string       // the lift's name, "" without one
	LiftIndex   int          // weight row of the lifted feature, 0 without one
	Pairs       [][2]float32 // one-vs-one: the label pair of each polytope pair
	Matrices    []string     // a name for each weight matrix
	Positives   []*float32   // for each weight matrix, the label outside it (CPM), else nil
	Classes     string       // the label map of a binary model in words
	Legends     []string     // plot: a legend for the faces of each weight matrix
	Title       string       // plot: the model in a few words ("cpm, single-sided, K = 4")
	Features    int          // features the model uses, excluding the bias and the lift
	EvalRule    string       // eval: which face a prediction names

	// NoHyperplanes, if set, says why the model has no hyperplanes to show
	// (the kernel perceptron's dual form).
	NoHyperplanes string
}

// Describe returns the description of m, a model of a registered learner.
func Describe(m *model.Model) (*Description, error) {
	l, ok := lookup(m.Learner)
	if !ok {
		return nil, fmt.Errorf("model of unknown learner %q (this build knows %v)", m.Learner, Names())
	}
	d, err := l.describe(m)
	if err != nil {
		return nil, err
	}
	if d.NoHyperplanes == "" && len(d.Matrices) != len(m.Weights) {
		return nil, fmt.Errorf("%s model has %d weight matrices, want %d: %w", m.Learner, len(m.Weights), len(d.Matrices), model.ErrInvalid)
	}
	return d, nil
}

// binaryClasses describes the label map [first, second] of a binary model
// in the words of format, which has two %s verbs.
func binaryClasses(m *model.Model, format string) string {
	if len(m.Classes) != 2 {
		return ""
	}
	return fmt.Sprintf(format, fmtLabel(m.Classes[0]), fmtLabel(m.Classes[1]))
}

func fmtLabel(c float32) string { return strconv.FormatFloat(float64(c), 'g', -1, 32) }
