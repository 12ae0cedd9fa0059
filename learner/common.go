package learner

import (
	"fmt"
	"math"

	"github.com/polyhedral/cpm/linear"
)

// sharedFlags are read by every learner; -h lists them first.
var sharedFlags = []flagDef{scaleFlag, hashFlag}

// The flags several learners read, each with one meaning.
var (
	biasFlag = flagDef{Name: "bias", Kind: floatFlag, Default: "1", Usage: "value of the constant bias feature (0: no bias)",
		Check: func(f *Flags) error {
			if v := f.Float("bias"); math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("--bias %v: want a finite value (0 = no bias)", v)
			}
			return nil
		}}
	epochsFlag = flagDef{Name: "epochs", Kind: intFlag, Default: "0", Usage: "maximum passes over the data (default 100)",
		Check: func(f *Flags) error {
			if v := f.Int("epochs"); v < 0 {
				return fmt.Errorf("--epochs %d: want >= 1", v)
			}
			return nil
		}}
	liftFlag = flagDef{Name: "lift", Kind: stringFlag, Default: "none", Usage: "feature map: none, or quadratic (appends ||x||^2 as one extra feature)",
		Check: func(f *Flags) error {
			_, err := linear.ParseLift(f.String("lift"))
			return err
		}}
	refuseLift = flagDef{Name: "lift", Refuse: true, Usage: "is for the perceptron and the Polyceptron"}
)

// refuseOvO is the --ovo flag of a learner that trains its own multiclass
// form.
func refuseOvO(name string) flagDef {
	return flagDef{Name: "ovo", Refuse: true, Usage: fmt.Sprintf("is for the cpm learner; %s trains its own multiclass form", name)}
}

// kFlag is -k, the number of faces, hyperplanes or experts; a list makes
// train choose K by cross-validation.
func kFlag(usage string) flagDef {
	return flagDef{Name: "k", Kind: intListFlag, Usage: usage, Note: "a list such as 2,3,4 makes train choose K by cross-validation"}
}

// lambdaFlag is --lambda, an L2 penalty.
func lambdaFlag(usage string) flagDef {
	return flagDef{Name: "lambda", Kind: floatFlag, Default: "0", Usage: usage,
		Check: func(f *Flags) error {
			if v := f.Float("lambda"); math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return fmt.Errorf("--lambda %v: want a finite value > 0 (or 0 for 1/(C*T))", v)
			}
			return nil
		}}
}

// defaultFloat is a float flag whose 0 means the learner's default.
func defaultFloat(name, usage string) flagDef {
	return flagDef{Name: name, Kind: floatFlag, Default: "0", Usage: usage,
		Check: func(f *Flags) error {
			if v := f.Float(name); math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return fmt.Errorf("--%s %v: want a finite value >= 0 (0 for the default)", name, v)
			}
			return nil
		}}
}

// defaultInt is an int flag whose 0 means the learner's default.
func defaultInt(name, usage string) flagDef {
	return flagDef{Name: name, Kind: intFlag, Default: "0", Usage: usage,
		Check: func(f *Flags) error {
			if v := f.Int(name); v < 0 {
				return fmt.Errorf("--%s %d: want a whole number >= 0 (0 for the default)", name, v)
			}
			return nil
		}}
}

// firstK returns the first -k value, 0 (the default) if none.
func firstK(f *Flags) int {
	if k := f.Ints("k"); len(k) > 0 {
		return k[0]
	}
	return 0
}

// lift returns the parsed --lift (checked by liftFlag's Check).
func lift(f *Flags) linear.Lift {
	l, _ := linear.ParseLift(f.String("lift"))
	return l
}

// bias returns --bias as a config's Bias and NoBias.
func bias(f *Flags) (float64, bool) { return f.Float("bias"), f.Float("bias") == 0 }

// liftSummary is the log description of a linear learner.
func liftSummary(name string) func(f *Flags) string {
	return func(f *Flags) string {
		if l := f.String("lift"); l != "none" {
			return fmt.Sprintf("%s (%s lift)", name, l)
		}
		return name
	}
}
