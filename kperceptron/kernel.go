package kperceptron

import (
	"cmp"
	"fmt"
	"math"
	"strconv"

	"github.com/polyhedral/cpm/kperceptron/internal/kvec"
	"github.com/polyhedral/cpm/sparsevec"
)

// KernelKind selects the kernel function of a Perceptron.
type KernelKind int

// Kernel kinds. The formulas are eq. 7 and 8 of Xu and Zhang, "A Multiclass
// Kernel Perceptron Algorithm" (see Perceptron), plus the linear
// kernel and the usual offset c of the polynomial kernel.
const (
	LinearKernel KernelKind = iota // k(x,y) = x·y
	PolyKernel                     // k(x,y) = (x·y + Coef0)^Degree; Coef0 = 0 is the paper's eq. 7
	RBFKernel                      // k(x,y) = exp(-‖x−y‖² / (2σ²)), eq. 8
)

var kernelNames = [...]string{LinearKernel: "linear", PolyKernel: "poly", RBFKernel: "rbf"}

// String returns "linear", "poly" or "rbf" (the names ParseKernelKind
// accepts), or "KernelKind(n)" for a value out of range.
func (k KernelKind) String() string {
	if k >= 0 && int(k) < len(kernelNames) {
		return kernelNames[k]
	}
	return "KernelKind(" + strconv.Itoa(int(k)) + ")"
}

// ParseKernelKind returns the kind named s, one of "linear", "poly" and
// "rbf" (exact, lower case). It is used for model files and the command
// line.
func ParseKernelKind(s string) (KernelKind, error) {
	for k, name := range kernelNames {
		if s == name {
			return KernelKind(k), nil
		}
	}
	return 0, fmt.Errorf("kperceptron: unknown kernel %q: want linear, poly or rbf", s)
}

// Default kernel parameters, used where the field is 0.
const (
	kernelDefaultDegree = 2
	kernelDefaultSigma  = 1
)

// Kernel is a Mercer kernel k(x, y) on sparse rows. The zero value is the
// linear kernel.
type Kernel struct {
	Kind   KernelKind
	Degree int     // poly degree p; if 0 defaults to 2; must be >= 0
	Coef0  float64 // poly offset c; must be finite
	Sigma  float64 // rbf width σ; if 0 defaults to 1; must be finite and >= 0
}

// withDefaults returns k with Degree and Sigma defaulted, or an error naming
// the bad parameter. Parameters the kind does not use are checked too, so
// that a model file never carries garbage.
func (k Kernel) withDefaults() (Kernel, error) {
	k.Degree = cmp.Or(k.Degree, kernelDefaultDegree)
	k.Sigma = cmp.Or(k.Sigma, kernelDefaultSigma)
	switch {
	case k.Kind < 0 || int(k.Kind) >= len(kernelNames):
		return k, fmt.Errorf("kernel kind %d: want linear, poly or rbf", int(k.Kind))
	case k.Degree < 0:
		return k, fmt.Errorf("kernel degree = %d, want >= 0 (0 means %d)", k.Degree, kernelDefaultDegree)
	case math.IsNaN(k.Coef0) || math.IsInf(k.Coef0, 0):
		return k, fmt.Errorf("kernel coef0 = %v, want a finite value", k.Coef0)
	case !(k.Sigma > 0) || math.IsInf(k.Sigma, 0):
		return k, fmt.Errorf("kernel sigma = %v, want a finite value >= 0 (0 means %d)", k.Sigma, kernelDefaultSigma)
	case k.Kind == RBFKernel && math.IsInf(1/(2*k.Sigma*k.Sigma), 0):
		return k, fmt.Errorf("kernel sigma = %v is too small: 1/(2σ²) overflows", k.Sigma)
	}
	return k, nil
}

// Eval returns k(x, y). xx and yy are ‖x‖² and ‖y‖² (callers cache them;
// see sparsevec.Vector.SqNorm); only the RBF kernel reads them, computing
// ‖x−y‖² = xx + yy − 2x·y, clamped at 0 against rounding. The inner product
// is sparsevec.Dot, in float64. Eval does not allocate. Zero Degree and
// Sigma take their defaults; other invalid parameters (Degree < 0, σ < 0,
// NaN) give a meaningless value, not a panic: Train and
// FromModel refuse them.
func (k Kernel) Eval(x, y sparsevec.Vector, xx, yy float64) float64 {
	f := k.fn()
	return f.eval(x, y, xx, yy)
}

// kernelFn is a Kernel with defaults resolved and the RBF coefficient
// precomputed, for the hot loops. Kernel.Eval goes through it too, so every
// path computes bit-identical values.
type kernelFn struct {
	kind   KernelKind
	degree int
	coef0  float64
	gamma  float64 // 1/(2σ²)
}

func (k Kernel) fn() kernelFn {
	d, s := k.Degree, k.Sigma
	if d == 0 {
		d = kernelDefaultDegree
	}
	if s == 0 {
		s = kernelDefaultSigma
	}
	return kernelFn{kind: k.Kind, degree: d, coef0: k.Coef0, gamma: 1 / (2 * s * s)}
}

func (f *kernelFn) eval(x, y sparsevec.Vector, xx, yy float64) float64 {
	dot := sparsevec.Dot(x, y)
	switch f.kind {
	case PolyKernel:
		return kernelPowi(dot+f.coef0, f.degree)
	case RBFKernel:
		return math.Exp(kvec.RBFArg(dot, xx, yy, f.gamma))
	}
	return dot
}

// finish turns inner products into kernel values in place: dst[r] = x_r·y
// becomes k(x_r, y), with xx[r] = ‖x_r‖² and yy = ‖y‖² (read by the RBF
// kernel only; xx must have len(dst) entries). Each value is bit-identical
// to eval's: the same float64 operations in the same order, the RBF
// kernel's by kvec.RBFKernel, which equals math.Exp(kvec.RBFArg(…)) bit
// for bit and does a whole slice at once.
func (f *kernelFn) finish(dst, xx []float64, yy float64) {
	switch f.kind {
	case PolyKernel:
		for r, dot := range dst {
			dst[r] = kernelPowi(dot+f.coef0, f.degree)
		}
	case RBFKernel:
		kvec.RBFKernel(dst, xx, yy, f.gamma)
	}
}

// kernelPowi returns b^n for n >= 0 by binary exponentiation (the same product
// on every platform; math.Pow is slower and rounds differently). It returns
// 1 for n <= 0.
func kernelPowi(b float64, n int) float64 {
	r := 1.0
	for n > 0 {
		if n&1 != 0 {
			r *= b
		}
		b *= b
		n >>= 1
	}
	return r
}
