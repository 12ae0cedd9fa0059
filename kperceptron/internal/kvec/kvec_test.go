package kvec

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/polyhedral/cpm/internal/cputime"
)

// expInputs returns n values covering the normal range, the boundaries of
// the vector path and the special cases of math.Exp.
func expInputs(rng *rand.Rand, n int) []float64 {
	special := []float64{0, math.Copysign(0, -1), 1, -1, 700, -700, 700.0000001, -700.0000001,
		-800, -800.0000001, -745.1332191019411, -745.1332191019412, -708.3964185322641,
		709.782712893384, 709.7827128933841, 710, -1e300, 1e300, math.Inf(1), math.Inf(-1),
		math.NaN(), math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, 1e-300, -1e-300}
	x := append([]float64(nil), special...)
	for len(x) < n {
		switch rng.IntN(4) {
		case 0:
			x = append(x, -rng.Float64()*30) // RBF kernel arguments
		case 1:
			x = append(x, (2*rng.Float64()-1)*820)
		case 2:
			x = append(x, math.Float64frombits(rng.Uint64()))
		default:
			x = append(x, -rng.ExpFloat64())
		}
	}
	return x
}

// checkExp compares Exp on x with math.Exp bit for bit, at every offset and
// length so that each value meets the vector path and the scalar tail.
func checkExp(t *testing.T, x []float64) {
	t.Helper()
	got := make([]float64, len(x))
	for off := range min(len(x), 5) {
		copy(got, x)
		Exp(got[off:])
		for i := off; i < len(x); i++ {
			want := math.Exp(x[i])
			if math.Float64bits(got[i]) != math.Float64bits(want) && !(math.IsNaN(got[i]) && math.IsNaN(want)) {
				t.Fatalf("Exp(%v) = %v (%#x), math.Exp = %v (%#x)", x[i], got[i], math.Float64bits(got[i]), want, math.Float64bits(want))
			}
		}
		for i := range off {
			if math.Float64bits(got[i]) != math.Float64bits(x[i]) && !math.IsNaN(x[i]) {
				t.Fatalf("Exp(x[%d:]) changed x[%d]", off, i)
			}
		}
	}
}

func TestExpMatchesMathExp(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, asm := range asmModes() {
		t.Run(asm.name, func(t *testing.T) {
			defer asm.set()()
			checkExp(t, expInputs(rng, 1<<16))
			// Sorted: long runs of blocks on the vector path, then on the
			// scalar one.
			x := expInputs(rng, 4099)
			for i := range x {
				x[i] = -math.Abs(x[i])
			}
			checkExp(t, x)
		})
	}
}

func FuzzExp(f *testing.F) {
	f.Add(0.0, -1.0, -700.5, 3.25, -0.125)
	f.Add(-745.2, -800.0, 700.0, 1e-310, -1e9)
	f.Fuzz(func(t *testing.T, a, b, c, d, e float64) {
		checkExp(t, []float64{a, b, c, d, e, a, b, c, d, e})
	})
}

// RBFKernel equals math.Exp(RBFArg(…)) bit for bit: inner products that
// make ‖x−y‖² negative by rounding, zero of either sign, NaN and ±Inf,
// arguments on the vector path and beyond it.
func TestRBFKernelMatchesScalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, asm := range asmModes() {
		t.Run(asm.name, func(t *testing.T) {
			defer asm.set()()
			for n := range 40 {
				for range 200 {
					xx := make([]float64, n+rng.IntN(2))
					dot := make([]float64, n)
					yy := rng.ExpFloat64() * 3
					gamma := []float64{1e-3, 0.5, 2, 50, 1e6}[rng.IntN(5)]
					for i := range dot {
						xx[i] = rng.ExpFloat64() * 3
						switch rng.IntN(8) {
						case 0: // ‖x−y‖² = 0 up to rounding, either side
							dot[i] = (xx[i] + yy) / 2 * (1 + (rng.Float64()-0.5)*1e-15)
						case 1:
							dot[i] = randF64(rng, 1)[0]
						case 2:
							dot[i] = []float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1)}[rng.IntN(5)]
						default:
							dot[i] = (rng.Float64()*2 - 1) * math.Sqrt(xx[i]*yy)
						}
					}
					got := append([]float64(nil), dot...)
					RBFKernel(got, xx, yy, gamma)
					want := make([]float64, n)
					for i := range want {
						want[i] = math.Exp(RBFArg(dot[i], xx[i], yy, gamma))
					}
					sameSlices(t, "RBFKernel", got, want)
				}
			}
		})
	}
}

func TestExpDoesNotAllocate(t *testing.T) {
	x := expInputs(rand.New(rand.NewPCG(5, 6)), 1000)
	if a := testing.AllocsPerRun(10, func() { Exp(x) }); a != 0 {
		t.Errorf("%v allocations", a)
	}
}

// BenchmarkExp measures Exp on RBF kernel arguments (uniform in [-30, 0]);
// cpu-ns/exp is the thread's CPU time, steadier than the wall time on a
// shared machine.
func BenchmarkExp(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	x := make([]float64, 1024)
	for i := range x {
		x[i] = -rng.Float64() * 30
	}
	y := make([]float64, len(x))
	for _, asm := range asmModes() {
		b.Run(asm.name, func(b *testing.B) {
			defer asm.set()()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu0 := cputime.Thread()
			for b.Loop() {
				copy(y, x)
				Exp(y)
			}
			n := float64(b.N * len(x))
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/exp")
			b.ReportMetric(float64(cputime.Thread()-cpu0)/n, "cpu-ns/exp")
		})
	}
}

// The vector path takes whole blocks of normal and very negative values,
// so the tests above exercise it.
func TestExpBlocksCoversNormalValues(t *testing.T) {
	x := []float64{-1, -2, 0, 3, -900, math.Inf(-1), -5, -6, 1, 2}
	want := 8
	if !vectorExp() {
		want = 0
	}
	if got := expBlocks(x); got != want {
		t.Errorf("expBlocks did %d values, want %d", got, want)
	}
}

// randF64 returns n values of all kinds: normal, huge, tiny, denormal,
// ±0, ±Inf, NaN and random bit patterns.
func randF64(rng *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		switch rng.IntN(10) {
		case 0:
			x[i] = math.Float64frombits(rng.Uint64())
		case 1:
			x[i] = []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), 5e-324, -1e308, 1e308}[rng.IntN(8)]
		default:
			x[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(20)-10))
		}
	}
	return x
}

func sameSlices(t *testing.T, what string, got, want []float64) {
	t.Helper()
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) && !(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
			t.Fatalf("%s: [%d] = %v (%#x), scalar loop %v (%#x)", what, i, got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
		}
	}
}

// AddScaled, Add and Sub equal their scalar loops bit for bit, at every
// length (vector blocks and tails).
func TestAddKernelsMatchScalarLoops(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, asm := range asmModes() {
		t.Run(asm.name, func(t *testing.T) {
			defer asm.set()()
			for n := range 70 {
				for range 20 {
					dst, src := randF64(rng, n), randF64(rng, n+1+rng.IntN(3))
					x := make([]float32, n+rng.IntN(3))
					for i := range x {
						x[i] = float32(src[rng.IntN(len(src))])
					}
					a := randF64(rng, 1)[0]
					want := append([]float64(nil), dst...)
					for i := range want {
						want[i] += float64(float64(x[i]) * a)
					}
					got := append([]float64(nil), dst...)
					AddScaled(got, x, a)
					sameSlices(t, "AddScaled", got, want)

					want = append(want[:0], dst...)
					for i := range want {
						want[i] += src[i]
					}
					got = append(got[:0], dst...)
					Add(got, src)
					sameSlices(t, "Add", got, want)

					want = append(want[:0], dst...)
					for i := range want {
						want[i] -= src[i]
					}
					got = append(got[:0], dst...)
					Sub(got, src)
					sameSlices(t, "Sub", got, want)
				}
			}
		})
	}
}

func TestAddKernelsPanicOnShortSource(t *testing.T) {
	for name, f := range map[string]func(){
		"AddScaled": func() { AddScaled(make([]float64, 9), make([]float32, 8), 1) },
		"Add":       func() { Add(make([]float64, 9), make([]float64, 8)) },
		"Sub":       func() { Sub(make([]float64, 9), make([]float64, 8)) },
		"RBFDot":    func() { RBFDot(make([]float64, 9), make([]float64, 9), 1, 1, make([]float32, 8)) },
	} {
		mustPanic(t, name+" with a short source", f)
	}
}

// mustPanic fails the test unless f panics.
func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s: no panic", what)
		}
	}()
	f()
}

// AddScaledCols and SetScaledCols equal the scalar loop of one AddScaled
// per column, in column order, onto dst or onto +0, bit for bit, at every length (blocks of 16 and tails) and
// for columns anywhere in x, overlapping or not.
func TestAddScaledColsMatchesScalarLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, asm := range asmModes() {
		t.Run(asm.name, func(t *testing.T) {
			defer asm.set()()
			for n := range 70 {
				for range 20 {
					dst := randF64(rng, n)
					src := randF64(rng, 8)
					x := make([]float32, 3*n+rng.IntN(5))
					for i := range x {
						x[i] = float32(src[rng.IntN(len(src))])
					}
					offs := make([]int, rng.IntN(6))
					for k := range offs {
						offs[k] = rng.IntN(len(x) - n + 1)
					}
					a := randF64(rng, len(offs)+rng.IntN(2))
					got := append([]float64(nil), dst...)
					AddScaledCols(got, x, offs, a)
					sameSlices(t, "AddScaledCols", got, scaledCols(append([]float64(nil), dst...), x, offs, a))

					want := scaledCols(make([]float64, n), x, offs, a) // onto +0
					got = append(got[:0], dst...)                      // garbage SetScaledCols must not read
					for i := range got {
						if i%3 == 0 {
							got[i] = math.NaN()
						}
					}
					SetScaledCols(got, x, offs, a)
					sameSlices(t, "SetScaledCols", got, want)
				}
			}
		})
	}
}

// scaledCols is the scalar loop AddScaledCols matches: one AddScaled of
// column offs[k] of x times a[k] onto dst per column, in column order.
func scaledCols(dst []float64, x []float32, offs []int, a []float64) []float64 {
	for k, o := range offs {
		for i := range dst {
			dst[i] += float64(float64(x[o+i]) * a[k])
		}
	}
	return dst
}

func TestAddScaledColsPanicsOnShortInput(t *testing.T) {
	for name, f := range map[string]func(){
		"column past x": func() { AddScaledCols(make([]float64, 20), make([]float32, 30), []int{0, 11}, []float64{1, 2}) },
		"short a":       func() { AddScaledCols(make([]float64, 20), make([]float32, 60), []int{0, 20}, []float64{1}) },
	} {
		mustPanic(t, name, f)
	}
}

// RBFDot equals RBFKernel followed by the scalar loop of rounded products
// summed in index order, bit for bit, with inner products that leave the
// vector path (NaN, ±Inf, huge) anywhere in the row.
func TestRBFDotMatchesScalarLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for _, asm := range asmModes() {
		t.Run(asm.name, func(t *testing.T) {
			defer asm.set()()
			for n := range 40 {
				for range 200 {
					xx := make([]float64, n+rng.IntN(2))
					dot := make([]float64, n)
					alpha := make([]float32, n+rng.IntN(2))
					yy := rng.ExpFloat64() * 3
					gamma := []float64{1e-3, 0.5, 2, 50}[rng.IntN(4)]
					for i := range dot {
						xx[i] = rng.ExpFloat64() * 3
						dot[i] = (rng.Float64()*2 - 1) * math.Sqrt(xx[i]*yy)
						if rng.IntN(30) == 0 {
							dot[i] = []float64{math.NaN(), math.Inf(1), math.Inf(-1), -1e300}[rng.IntN(4)]
						}
					}
					for i := range alpha {
						alpha[i] = float32(rng.IntN(41) - 20)
						if rng.IntN(3) == 0 {
							alpha[i] = float32(rng.NormFloat64() * 1e3)
						}
					}
					kern := append([]float64(nil), dot...)
					RBFKernel(kern, xx, yy, gamma)
					var want float64
					for i, k := range kern {
						want += float64(float64(alpha[i]) * k)
					}
					got := append([]float64(nil), dot...)
					sum := RBFDot(got, xx, yy, gamma, alpha)
					sameSlices(t, "RBFDot kernel values", got, kern)
					sameSlices(t, "RBFDot sum", []float64{sum}, []float64{want})
				}
			}
		})
	}
}
