package tune

import (
	"fmt"
	"math"
)

// Rule is how a search chooses its point.
type Rule int

const (
	// Best chooses the best mean accuracy; points within Tie of it go to
	// the simplest (Simpler).
	Best Rule = iota
	// OneSE chooses the simplest point whose mean accuracy is within one
	// standard error (Row.StdErr of the best point) of the best.
	OneSE
)

// Tie is the difference in mean accuracy (percentage points) below which
// two points tie.
const Tie = 1e-9

// String returns the rule's name as --rule takes it.
func (r Rule) String() string {
	if r == OneSE {
		return "1se"
	}
	return "best"
}

// ParseRule parses a rule name as String returns it.
func ParseRule(s string) (Rule, error) {
	switch s {
	case "best":
		return Best, nil
	case "1se":
		return OneSE, nil
	}
	return 0, fmt.Errorf("unknown rule %q (want best or 1se)", s)
}

// Describe states the rule in a sentence.
func (r Rule) Describe() string {
	if r == OneSE {
		return "the simplest point whose mean accuracy is within one standard error (of the best point's mean, over folds or seeds) of the best mean; simpler: fewer hyperplanes, then smaller k, then the earlier point"
	}
	return fmt.Sprintf("best mean accuracy; ties (within %g) go to the simpler model: fewer hyperplanes, then smaller k, then the earlier point", Tie)
}

// Choose returns the index in rows of the point rule chooses among those
// listed in among (every row if among is nil).
func Choose(rows []Row, rule Rule, among []int) int {
	if among == nil {
		among = make([]int, len(rows))
		for i := range among {
			among[i] = i
		}
	}
	if len(among) == 0 {
		return -1
	}
	best := among[0]
	for _, i := range among[1:] {
		if rows[i].AccuracyMean > rows[best].AccuracyMean+Tie ||
			math.Abs(rows[i].AccuracyMean-rows[best].AccuracyMean) <= Tie && Simpler(rows[i], rows[best]) {
			best = i
		}
	}
	if rule == Best {
		return best
	}
	floor := rows[best].AccuracyMean - rows[best].StdErr - Tie
	chosen := best
	for _, i := range among {
		if rows[i].AccuracyMean >= floor && Simpler(rows[i], rows[chosen]) {
			chosen = i
		}
	}
	return chosen
}

// Simpler reports whether a is a simpler model than b: fewer mean
// hyperplanes (by more than Tie), then a smaller k, then an earlier point.
func Simpler(a, b Row) bool {
	if d := a.HyperplanesMean - b.HyperplanesMean; math.Abs(d) > Tie {
		return d < 0
	}
	ka, aok := a.Point.Value("k")
	kb, bok := b.Point.Value("k")
	if aok && bok && ka.Num != kb.Num {
		return ka.Num < kb.Num
	}
	return a.Point.Index < b.Point.Index
}
