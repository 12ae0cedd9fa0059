package learner

import (
	"bytes"
	"context"
	"reflect"
	"testing"

	"github.com/polyhedral/cpm/model"
)

// A calibrated model keeps its Calibration through the model file and
// predicts the same probabilities afterwards.
func TestCalibrationSurvivesTheModelFile(t *testing.T) {
	data := load(t, "ionosphere.libsvm")
	m, _, err := TrainCalibrated(context.Background(), specs()[CPM].WithSeed(1), data, 0.2, 1)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := model.Write(&buf, m); err != nil {
		t.Fatal(err)
	}
	m2, err := model.Read(&buf, "test")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m.Calibration, m2.Calibration) {
		t.Fatalf("calibration %+v written, %+v read", m.Calibration, m2.Calibration)
	}
	p1, _ := NewPredictor(m)
	p2, err := NewPredictor(m2)
	if err != nil {
		t.Fatal(err)
	}
	for r := range data.Rows() {
		if a, b := p1.(Probabilist).Proba(data.Row(r)), p2.(Probabilist).Proba(data.Row(r)); a != b {
			t.Fatalf("row %d: p %v before saving, %v after", r, a, b)
		}
	}
}
