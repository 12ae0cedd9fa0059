package model

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"
)

// benchModel is a double-sided CPM model of 2×100000×16 weights (12.8 MB).
func benchModel() *Model {
	rng := rand.New(rand.NewPCG(5, 6))
	m := &Model{Learner: "cpm", Sides: 2, K: 16, D: 100000, Classes: []float32{-1, 1}}
	for range 2 {
		m.Weights = append(m.Weights, filled(rng, m.D, m.K))
	}
	return m
}

func BenchmarkWrite(b *testing.B) {
	m := benchModel()
	b.SetBytes(int64(len(m.Weights) * m.D * m.K * 4))
	b.ReportAllocs()
	for b.Loop() {
		if err := Write(io.Discard, m); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRead(b *testing.B) {
	data := encodeT(b, benchModel())
	for _, how := range []string{"known", "stream"} {
		b.Run(how, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				var r io.Reader = bytes.NewReader(data)
				if how == "stream" {
					r = streamOnly{bytes.NewReader(data)}
				}
				if _, err := Read(r, "bench.cpm"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
