package model_test

import (
	"bytes"
	"fmt"
	"os"

	"github.com/polyhedral/cpm/model"
	"github.com/polyhedral/cpm/sparsevec"
)

// The expected output below was written by hand from the model literal and
// the format documented on ExportText.
func ExampleModel_ExportText() {
	w := sparsevec.NewMatrix(3, 2) // D = 3: bias row and features 1, 2
	w.Set(0, 0, 0.5)               // bias, face 0
	w.Set(2, 0, -1.25)             // feature 2, face 0
	w.Set(1, 1, 1e-8)              // feature 1, face 1
	m := &model.Model{
		Learner: "cpm", Sides: 1, K: 2, D: 3,
		Lambda: 1e-4, Entropy: 0.6931471805599453, CostRatio: 1, Bias: 1,
		Seed: 42, Iterations: 20000,
		Classes: []float32{-1, 1},
		Params:  map[string]string{"epochs": "2", "assign": "entropy"},
		Weights: []*sparsevec.Matrix{w},
		Counts:  [][]uint64{{70, 30}},
	}
	if err := m.ExportText(os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// learner: cpm
	// format: 2
	// sides: 1
	// k: 2
	// d: 3
	// lambda: 0.0001
	// entropy: 0.6931471805599453
	// cost_ratio: 1
	// bias: 1
	// seed: 42
	// iterations: 20000
	// ovo: false
	// multiclass: false
	// classes: -1 1
	// param.assign: "entropy"
	// param.epochs: "2"
	// matrices: 1
	// counts: true
	//
	// matrix: 0
	// side: 0
	// face: 0
	// count: 70
	// 0:0.5
	// 2:-1.25
	// face: 1
	// count: 30
	// 1:1e-08
}

func ExampleModel_ExportText_oneVsOne() {
	m := &model.Model{
		Learner: "cpm", Sides: 1, K: 1, D: 1,
		Classes: []float32{1, 2, 3},
		OvO:     true,
		Extra:   []model.Blob{{Name: "alpha", F32: []float32{1, 2}}},
	}
	for i := range m.Matrices() {
		w := sparsevec.NewMatrix(1, 1)
		w.Set(0, 0, float32(i+1))
		m.Weights = append(m.Weights, w)
	}
	var buf bytes.Buffer
	if err := m.ExportText(&buf); err != nil {
		fmt.Println(err)
	}
	fmt.Print(buf.String()[bytes.Index(buf.Bytes(), []byte("matrices")):])
	// Output:
	// matrices: 3
	// counts: false
	// blob.alpha: f32=2 u32=0 i64=0
	//
	// matrix: 0
	// side: 0
	// pair: 1 2
	// face: 0
	// 0:1
	//
	// matrix: 1
	// side: 0
	// pair: 1 3
	// face: 0
	// 0:2
	//
	// matrix: 2
	// side: 0
	// pair: 2 3
	// face: 0
	// 0:3
}

func Example() {
	w := sparsevec.NewMatrix(2, 1)
	w.Set(1, 0, 2)
	m := &model.Model{Learner: "cpm", Sides: 1, K: 1, D: 2, Classes: []float32{-1, 1}, Weights: []*sparsevec.Matrix{w}}
	var buf bytes.Buffer
	if err := model.Write(&buf, m); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(buf.Len(), "bytes")
	got, err := model.Read(&buf, "example.cpm")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(got.Learner, got.D, got.K, got.Weights[0].At(1, 0))

	_, err = model.Read(bytes.NewReader([]byte("CPMMODEL\x03\x00\x00\x00")), "future.cpm")
	fmt.Println(err)
	// Output:
	// 139 bytes
	// cpm 2 1 2
	// future.cpm: unsupported model format version: file has format version 3, this build reads versions 1 and 2 (at byte 8)
}
