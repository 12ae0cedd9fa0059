package reader

import "github.com/polyhedral/cpm/reader/internal/core"

// ZeroBasedOf returns the ZeroBased mode that opts set when applied in
// order (ZeroBasedAuto if none sets one): for a caller that reads a source
// in a way of its own when the mode is auto.
func ZeroBasedOf(opts ...Option) ZeroBased { return core.BuildOptions(opts).ZeroBased }
