// Package sparsevec is the sparse kernel shared by every learner in this
// module: sparse rows, CSR blocks of many rows, and a dense feature-major
// weight matrix with the few operations SGD-style learners need.
//
// Layout. A Matrix holds D feature rows of Stride float32 each; the weight of
// feature j for face k is Data[j*Stride+k]. One nonzero x_j of a sparse row
// therefore touches Stride contiguous floats, which is what makes the three
// kernels below cache- and SIMD-friendly:
//
//	Scores(dst, x):    dst[k]  = Σ_i x.Val[i] · W[x.Idx[i]][k]      for all k
//	AddToFace(k, a, x): W[j][k] += a · x_j                         for one face
//	AddOuter(c, x):    W[j][:] += x_j · c[:]                       (rank-one update)
//
// ScoresArgmax is Scores followed by what a linear machine with a bias
// feature and lazily scaled weights does with the sums: dst[k] =
// s·(dst[k] + b·W[0][k]) and the index of the largest, in one kernel call.
//
// AddOuter with c = a on a chosen set of faces and 0 elsewhere updates that
// set of faces in one pass; this is how CPM pushes a negative row down on
// every violated face (Kantchelian et al., NIPS 2014, Algorithm 1).
//
// Implementations. Every kernel has a pure-Go version (kernel_generic.go).
// On amd64 CPUs with AVX2 and FMA, Scores and AddOuter run assembly
// kernels instead (kernel_amd64.s), chosen once at start-up; the purego
// build tag disables them. The assembly sums in a different order and
// fuses multiplies into adds, so its float32 results may differ from the
// Go kernels' in the last bits, within the bound given on Scores.
//
// None of the kernels allocates. They panic on programmer error (a feature
// index not below D, a dst shorter than Stride), never on data.
//
// Package sparsevec/csrconv converts CSR blocks to and from the *sparse.CSR
// of github.com/james-bowman/sparse, and measures its scoring against
// Scores.
package sparsevec
