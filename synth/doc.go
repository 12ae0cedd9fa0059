// Package synth generates the synthetic polyhedral data sets of Manwani and
// Sastry, "Polyceptron: A Polyhedral Learning Algorithm", section 4.1.
//
// Each data set draws points uniformly from the cube [-1,1]^d and labels a
// point +1 when it lies inside a polyhedron (an intersection of halfspaces
// w·x + b ≥ 0) and -1 otherwise, the paper's convention (positives inside).
// Note that the CPM of package sgd puts the negative class inside instead.
//
// The data sets (Lookup, Names):
//
//	polyceptron-d1  d = 10, 3 halfspaces, PolyceptronD1 (the paper's Dataset 1)
//	polyceptron-d2  d = 20, 4 halfspaces, PolyceptronD2 (the paper's Dataset 2)
//
// The paper uses 1000 points of each. Generation is deterministic: a seed
// gives the same rows on every platform and Go version (see
// Dataset.Generate).
package synth
