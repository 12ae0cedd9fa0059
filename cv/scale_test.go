package cv

import (
	"testing"
)

func TestScaler(t *testing.T) {
	third := float32(1.0 / 3.0)
	tests := []struct {
		name        string
		train       [][]entry
		test        [][]entry
		wantTrain   [][]entry
		wantTest    [][]entry
		wantTestDim int
	}{
		{
			// Feature 1: -2, 4, absent → min -2, max 4; its zero scales
			// to 1/3 and appears in every row. Feature 2: 5 everywhere,
			// constant → dropped. Feature 3: 7 once, absent twice →
			// [0,7]. Feature 4: 3, absent, 3 → [0,3]. Features 5 and up:
			// unseen → dropped.
			name: "negative minimum, constant, unseen",
			train: [][]entry{
				{{1, -2}, {2, 5}, {4, 3}},
				{{1, 4}, {2, 5}, {3, 7}},
				{{2, 5}, {4, 3}},
			},
			test: [][]entry{
				{},
				{{1, 10}, {2, 6}, {3, -7}, {5, 9}, {8, 1}},
				{{1, -2}, {4, 1.5}},
				{{1, -5}, {3, 14}},
			},
			wantTrain: [][]entry{
				{{4, 1}},
				{{1, 1}, {3, 1}},
				{{1, third}, {4, 1}},
			},
			wantTest: [][]entry{
				{{1, third}},
				{{1, 2}, {3, -1}}, // not clipped
				{{4, 0.5}},
				{{1, -0.5}, {3, 2}},
			},
			wantTestDim: 9,
		},
		{
			// Feature 2 is in every row with values 2..4: min 2 > 0, so
			// a row lacking it scales its zero to (0-2)/2 = -1.
			name:        "positive minimum",
			train:       [][]entry{{{2, 2}}, {{2, 4}}, {{1, 1}, {2, 3}}},
			test:        [][]entry{{}, {{1, 0.5}}, {{2, 5}}},
			wantTrain:   [][]entry{{}, {{2, 1}}, {{1, 1}, {2, 0.5}}},
			wantTest:    [][]entry{{{2, -1}}, {{1, 0.5}, {2, -1}}, {{2, 1.5}}},
			wantTestDim: 3,
		},
		{
			name:        "all constant",
			train:       [][]entry{{{1, 1}, {2, -3}}, {{1, 1}, {2, -3}}},
			test:        [][]entry{{{1, 2}, {2, -3}, {3, 4}}},
			wantTrain:   [][]entry{{}, {}},
			wantTest:    [][]entry{{}},
			wantTestDim: 4,
		},
		{
			name:        "empty training set",
			train:       nil,
			test:        [][]entry{{{1, 2}}},
			wantTrain:   nil,
			wantTest:    [][]entry{{}},
			wantTestDim: 2,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			trainLabels := make([]float32, len(tc.train))
			for i := range trainLabels {
				trainLabels[i] = float32(i)
			}
			testLabels := make([]float32, len(tc.test))
			for i := range testLabels {
				testLabels[i] = float32(-i)
			}
			train := csrOf(trainLabels, tc.train)
			test := csrOf(testLabels, tc.test)
			s := FitScaler(train)

			dst := csrOf([]float32{9, 9}, [][]entry{{{1, 1}}, {{7, 7}}}) // Apply must Reset it
			s.Apply(dst, train)
			checkCSR(t, dst, trainLabels, tc.wantTrain)
			if dst.Dim != train.Dim {
				t.Errorf("train Dim %d, want %d", dst.Dim, train.Dim)
			}
			s.Apply(dst, test)
			checkCSR(t, dst, testLabels, tc.wantTest)
			if dst.Dim != tc.wantTestDim || test.Dim != tc.wantTestDim {
				t.Errorf("test Dim %d (src %d), want %d", dst.Dim, test.Dim, tc.wantTestDim)
			}
		})
	}
}

// TestScalerDimGrows: a test set of smaller Dim still gets the scaled zeros
// of the training features, and Dim covers them.
func TestScalerDimGrows(t *testing.T) {
	train := csrOf([]float32{1, 1}, [][]entry{{{5, -1}}, {{5, 1}}})
	test := csrOf([]float32{1}, [][]entry{{{1, 3}}})
	var dst = csrOf(nil, nil)
	FitScaler(train).Apply(dst, test)
	checkCSR(t, dst, []float32{1}, [][]entry{{{5, 0.5}}})
	if dst.Dim != 6 {
		t.Errorf("Dim %d, want 6", dst.Dim)
	}
}

func TestScalerApplyInPlacePanics(t *testing.T) {
	m := csrOf([]float32{1}, [][]entry{{{1, 1}}})
	defer func() {
		if recover() == nil {
			t.Error("Apply(m, m) did not panic")
		}
	}()
	FitScaler(m).Apply(m, m)
}

func TestScalerApplyAllocs(t *testing.T) {
	train := csrOf([]float32{1, -1}, [][]entry{{{1, -1}, {2, 3}}, {{2, 1}, {3, 2}}})
	s := FitScaler(train)
	dst := csrOf(nil, nil)
	s.Apply(dst, train) // size dst
	if n := testing.AllocsPerRun(100, func() { s.Apply(dst, train) }); n != 0 {
		t.Errorf("Apply into a sized dst: %v allocations, want 0", n)
	}
}
