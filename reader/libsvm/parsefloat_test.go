package libsvm

import (
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/polyhedral/cpm/reader/internal/core"
)

// checkFloat compares parseFloat32 with strconv.ParseFloat(s, 32), the
// reference: equal bits when strconv gives a finite value, ErrNonFinite for
// NaN, ±Inf and overflow, ErrSyntax otherwise.
func checkFloat(t *testing.T, s string) {
	t.Helper()
	got, err := parseFloat32([]byte(s))
	x, werr := strconv.ParseFloat(s, 32)
	want := float32(x)
	switch {
	case werr != nil && errors.Is(werr, strconv.ErrRange):
		if err != core.ErrNonFinite {
			t.Errorf("parseFloat32(%q) = %v, %v; want ErrNonFinite (strconv: %v)", s, got, err, werr)
		}
	case werr != nil:
		if err != core.ErrSyntax {
			t.Errorf("parseFloat32(%q) = %v, %v; want ErrSyntax", s, got, err)
		}
	case math.IsNaN(x) || math.IsInf(x, 0):
		if err != core.ErrNonFinite {
			t.Errorf("parseFloat32(%q) = %v, %v; want ErrNonFinite", s, got, err)
		}
	default:
		if err != nil || math.Float32bits(got) != math.Float32bits(want) {
			t.Errorf("parseFloat32(%q) = %v (%#x), %v; want %v (%#x)", s, got, math.Float32bits(got), err, want, math.Float32bits(want))
		}
	}
}

func TestParseFloatEdges(t *testing.T) {
	for _, s := range []string{
		"0", "-0", "+0", "0.0", "-0.0", "00", ".0", "0.", ".", "-", "+", "", "-.", "+.5", "-.5", "5.",
		"1", "-1", "+1", "2", "0.5", "1e-3", "1E3", "1e+3", "1e", "1e+", "1e-", "e1", ".e1", "1.e1",
		"0.0117647", "0.00392157", "0.99215686", "0.992157", "255", "16777215", "16777216", "16777217",
		"1677721.5", "1.6777217e7", "9999999999", "0.0000000001", "1e10", "1e-10", "1e11", "1e-11",
		"123456789012345678", "1234567890123456789", "12345678901234567890", "0.12345678901234567890123",
		"3.4028235e38", "3.4028236e38", "3.5e38", "1e39", "-1e39", "1e-45", "1e-46", "1.4e-45", "7e-46",
		"1e-50", "0e999", "0e99999", "1e0000", "1e00001", "1e99999", "inf", "-Inf", "+INF", "infinity",
		"nan", "NaN", "0x1p-2", "0x1.8p1", "0X10", "0x", "1_000", "0x_1p0", "1..2", "1.2.3", "--1",
		"+-1", "1e1.5", "1:2", "#", "1#", "0.1", "0.2", "0.3", "0.7", "8388608.5", "8388609",
		"0.000001", "1.000001", "4194304.25", "33554431", "3.14159265358979", "2.5e-5",
	} {
		checkFloat(t, s)
	}
}

// TestParseFloatRandom checks the fast path and its edges on random
// decimal strings of every shape it handles, and the shortest forms of
// random float32 bit patterns.
func TestParseFloatRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 200000
	if testing.Short() {
		n = 20000
	}
	var b strings.Builder
	for range n {
		b.Reset()
		switch rng.IntN(3) {
		case 0:
			if rng.IntN(4) == 0 {
				b.WriteByte("-+"[rng.IntN(2)])
			}
			digits := 1 + rng.IntN(12)
			dot := rng.IntN(digits + 2)
			for i := range digits {
				if i == dot {
					b.WriteByte('.')
				}
				b.WriteByte(byte('0' + rng.IntN(10)))
			}
			if rng.IntN(3) == 0 {
				b.WriteByte("eE"[rng.IntN(2)])
				if rng.IntN(2) == 0 {
					b.WriteByte("-+"[rng.IntN(2)])
				}
				b.WriteString(strconv.Itoa(rng.IntN(14)))
			}
		case 1:
			// Mantissas near 2^24, where the fast path stops.
			m := 1<<24 - 64 + rng.IntN(128)
			s := strconv.Itoa(m)
			k := rng.IntN(len(s) + 1)
			b.WriteString(s[:k] + "." + s[k:])
			if rng.IntN(2) == 0 {
				b.WriteString("e" + strconv.Itoa(rng.IntN(21)-10))
			}
		default:
			f := math.Float32frombits(rng.Uint32())
			b.WriteString(strconv.FormatFloat(float64(f), "geE"[rng.IntN(3)], -1, 32))
		}
		checkFloat(t, b.String())
	}
}

func FuzzParseFloat(f *testing.F) {
	for _, s := range []string{"0.0117647", "1", "-0", "1e-10", "16777217", "1e39", "nan", "0x1p3", ".", "1e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.ContainsAny(s, " \t\r\v\f") {
			t.Skip()
		}
		checkFloat(t, s)
	})
}

func BenchmarkParseFloat(b *testing.B) {
	for _, tc := range []struct{ name, s string }{
		{"fast", "0.0117647"},
		{"int", "1"},
		{"slow", "0.99215686"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			in := []byte(tc.s)
			b.SetBytes(int64(len(in)))
			var sink float32
			for b.Loop() {
				f, _ := parseFloat32(in)
				sink += f
			}
			_ = sink
		})
	}
}

// The float64 fast path must not double-round: decimals at, just above and
// just below float32 midpoints (where rounding through float64 first could
// differ from rounding once) all agree with strconv.
func TestParseFloatMidpoints(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for i := 0; i < 20000; i++ {
		f := float32(rng.Float64() * math.Pow(10, float64(rng.IntN(20)-10)))
		lo, hi := float64(f), float64(math.Nextafter32(f, float32(math.Inf(1))))
		mid := (lo + hi) / 2 // exact in float64
		for _, v := range []float64{mid, math.Nextafter(mid, 0), math.Nextafter(mid, 2*mid)} {
			checkFloat(t, strconv.FormatFloat(v, 'g', -1, 64))
			checkFloat(t, strconv.FormatFloat(v, 'f', -1, 64))
		}
	}
	checkFloat(t, "16777217") // 2^24+1: a midpoint, ties to even
	checkFloat(t, "0.49411765")
}
