package core

import "fmt"

// ZeroBased says how a reader maps the feature indices it reads to the
// 1-based indices of LIBSVM that every row holds in memory: ZeroBasedNo
// keeps them (index 0 is an error), ZeroBasedYes adds 1 to each, and
// ZeroBasedAuto decides per file (see each format's reader).
type ZeroBased int8

const (
	ZeroBasedAuto ZeroBased = iota
	ZeroBasedNo
	ZeroBasedYes
)

// ParseZeroBased parses "auto", "no" or "yes".
func ParseZeroBased(s string) (ZeroBased, error) {
	switch s {
	case "auto", "":
		return ZeroBasedAuto, nil
	case "no":
		return ZeroBasedNo, nil
	case "yes":
		return ZeroBasedYes, nil
	}
	return 0, fmt.Errorf("zero-based %q: want yes, no or auto", s)
}

func (z ZeroBased) String() string {
	switch z {
	case ZeroBasedNo:
		return "no"
	case ZeroBasedYes:
		return "yes"
	}
	return "auto"
}
