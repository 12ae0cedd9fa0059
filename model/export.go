package model

import (
	"bufio"
	"io"
	"maps"
	"slices"
	"strconv"
)

// ExportText writes m as text for inspection (cpm export). The output is
// deterministic. It starts with a header of "key: value" lines:
//
//	learner, format, sides, k, d, lambda, entropy, cost_ratio, bias, seed,
//	iterations, ovo, classes (labels separated by spaces), one
//	"param.KEY: VALUE" line per param in key order with VALUE as a Go
//	quoted string, matrices, counts (true or false), steps (the step
//	count of each matrix, separated by spaces; only if m has Steps),
//	one "blob.NAME: f32=N u32=N i64=N" line per blob giving its array
//	lengths, only if m has a scaling, "scale: MODE" and
//	"scale.features: N", only if m has feature hashing, "hash.bits: B"
//	and "hash.seed: S", and only if m has a calibration,
//	"calibration: METHOD", "calibration.a" and "calibration.b" (the
//	values separated by spaces), "calibration.rows" and
//	"calibration.logloss".
//
// With a scaling, the weights are in the scaled space: a blank line,
// "scaling: x' = (x - shift)/div; other features 0" and one
// "feature:shift:div" line per kept feature follow the header (float64
// formatting).
//
// Then, for each matrix, a blank line and "matrix: I", "side: S" and, for a
// one-vs-one model, "pair: A B" with the pair's two class labels; then for
// each face "face: F", "count: N" if m has counts, and one "feature:weight"
// line per nonzero weight of that face in ascending feature order (feature
// 0 is the bias row), the same lines for a dense and a compact model. Float64 fields are formatted with
// strconv.FormatFloat(v, 'g', -1, 64), labels and weights with
// strconv.FormatFloat(float64(v), 'g', -1, 32).
//
// An invalid model is refused with the error of Validate.
func (m *Model) ExportText(w io.Writer) error {
	if err := m.Validate(); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	var b []byte // line buffer, reused
	line := func() {
		b = append(b, '\n')
		bw.Write(b) // the error is sticky; Flush reports it
		b = b[:0]
	}
	kv := func(key string) { b = append(append(b, key...), ": "...) }
	f64 := func(key string, v float64) {
		kv(key)
		b = strconv.AppendFloat(b, v, 'g', -1, 64)
		line()
	}
	i64 := func(key string, v int64) {
		kv(key)
		b = strconv.AppendInt(b, v, 10)
		line()
	}

	kv("learner")
	b = append(b, m.Learner...)
	line()
	i64("format", Version)
	i64("sides", int64(m.Sides))
	i64("k", int64(m.K))
	i64("d", int64(m.D))
	f64("lambda", m.Lambda)
	f64("entropy", m.Entropy)
	f64("cost_ratio", m.CostRatio)
	f64("bias", m.Bias)
	kv("seed")
	b = strconv.AppendUint(b, m.Seed, 10)
	line()
	i64("iterations", m.Iterations)
	kv("ovo")
	b = strconv.AppendBool(b, m.OvO)
	line()
	kv("multiclass")
	b = strconv.AppendBool(b, m.Multiclass)
	line()
	kv("classes")
	for i, c := range m.Classes {
		if i > 0 {
			b = append(b, ' ')
		}
		b = appendF32(b, c)
	}
	line()
	for _, k := range slices.Sorted(maps.Keys(m.Params)) {
		kv("param." + k)
		b = strconv.AppendQuote(b, m.Params[k])
		line()
	}
	i64("matrices", int64(len(m.Weights)))
	kv("counts")
	b = strconv.AppendBool(b, m.Counts != nil)
	line()
	if m.Steps != nil {
		kv("steps")
		for i, t := range m.Steps {
			if i > 0 {
				b = append(b, ' ')
			}
			b = strconv.AppendInt(b, t, 10)
		}
		line()
	}
	for _, x := range m.Extra {
		kv("blob." + x.Name)
		b = append(b, "f32="...)
		b = strconv.AppendInt(b, int64(len(x.F32)), 10)
		b = append(b, " u32="...)
		b = strconv.AppendInt(b, int64(len(x.U32)), 10)
		b = append(b, " i64="...)
		b = strconv.AppendInt(b, int64(len(x.I64)), 10)
		line()
	}
	if h := m.Hash; h != nil {
		i64("hash.bits", int64(h.Bits))
		i64("hash.seed", int64(h.Seed))
	}
	if c := m.Calibration; c != nil {
		kv("calibration")
		b = append(b, c.Method...)
		line()
		for _, f := range []struct {
			key string
			v   []float64
		}{{"calibration.a", c.A}, {"calibration.b", c.B}} {
			kv(f.key)
			for i, v := range f.v {
				if i > 0 {
					b = append(b, ' ')
				}
				b = strconv.AppendFloat(b, v, 'g', -1, 64)
			}
			line()
		}
		i64("calibration.rows", c.Rows)
		f64("calibration.logloss", c.LogLoss)
	}
	if sc := m.Scale; sc != nil {
		kv("scale")
		b = append(b, sc.Mode...)
		line()
		i64("scale.features", int64(len(sc.Index)))
		line()
		kv("scaling")
		b = append(b, "x' = (x - shift)/div; other features 0"...)
		line()
		for i, j := range sc.Index {
			b = strconv.AppendUint(b, uint64(j), 10)
			b = append(b, ':')
			b = strconv.AppendFloat(b, sc.Shift[i], 'g', -1, 64)
			b = append(b, ':')
			b = strconv.AppendFloat(b, sc.Div[i], 'g', -1, 64)
			line()
		}
	}

	pi, pj := 0, 1 // current one-vs-one pair
	for i, mat := range m.Weights {
		side := i % m.Sides
		line()
		i64("matrix", int64(i))
		i64("side", int64(side))
		if m.OvO {
			if i > 0 && side == 0 {
				if pj++; pj == len(m.Classes) {
					pi++
					pj = pi + 1
				}
			}
			kv("pair")
			b = append(appendF32(b, m.Classes[pi]), ' ')
			b = appendF32(b, m.Classes[pj])
			line()
		}
		for f := range mat.K {
			i64("face", int64(f))
			if m.Counts != nil {
				kv("count")
				b = strconv.AppendUint(b, m.Counts[i][f], 10)
				line()
			}
			for j := range mat.D {
				if v := mat.Data[j*mat.Stride+f]; v != 0 {
					b = strconv.AppendUint(b, uint64(m.feature(j)), 10)
					b = append(b, ':')
					b = appendF32(b, v)
					line()
				}
			}
		}
	}
	return bw.Flush()
}

func appendF32(b []byte, v float32) []byte {
	return strconv.AppendFloat(b, float64(v), 'g', -1, 32)
}
