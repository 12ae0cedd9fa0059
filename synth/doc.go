// Package synth generates synthetic data sets: the small polyhedral sets of
// the Polyceptron paper, and large data sets in the shapes of those of the
// CPM paper's Table 1 (Kantchelian et al., NIPS 2014, section 5), for
// training at scale without the originals.
//
// # Polyceptron sets
//
// The data sets of Manwani and Sastry, "Polyceptron: A Polyhedral Learning
// Algorithm", section 4.1 (Lookup, Names). Each draws points uniformly from
// the cube [-1,1]^d and labels a point +1 when it lies inside a polyhedron
// (an intersection of halfspaces w·x + b ≥ 0) and -1 otherwise, the paper's
// convention (positives inside). Note that the CPM of package sgd puts the
// negative class inside instead.
//
//	polyceptron-d1  d = 10, 3 halfspaces, PolyceptronD1 (the paper's Dataset 1)
//	polyceptron-d2  d = 20, 4 halfspaces, PolyceptronD2 (the paper's Dataset 2)
//
// The paper uses 1000 points of each. Generation is deterministic: a seed
// gives the same rows on every platform and Go version (see
// Dataset.Generate).
//
// # Large generated sets
//
// NewSource (Generated, LookupGenerated) makes a Source, whose row i is a pure
// function of (name, seed, split, i):
//
//	mnist8m    MNIST8m-like: MNIST training images and random deformations
//	           of them (MNIST8m; Loosli, Canu and Bottou 2007), 8,100,000 rows
//	mnist8m-2  the same, labelled +1 for digit 2 and -1 otherwise
//	url        URL-reputation-like (URL; Ma et al. 2009, LIBSVM url_combined),
//	           3,231,961 features, 1,198,065 rows per split
//	rcv1       RCV1-binary-like (RCV1; Lewis et al. 2004, LIBSVM rcv1.binary),
//	           47,236 features, 20,242 train / 677,399 test rows
//
// WriteStream writes rows 0..n-1 of a Source as LIBSVM text, made in blocks
// by a pool of goroutines and written in order, with bounded memory and
// output that does not depend on the number of goroutines. Randomness comes
// only from PCGs seeded from the user's seed (math/rand/v2), never from the
// global generator.
package synth
