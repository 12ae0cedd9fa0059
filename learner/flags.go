package learner

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/polyhedral/cpm/scale"
)

// flagKind is the type of a flag's value.
type flagKind int

// Flag kinds.
const (
	boolFlag    flagKind = iota
	intFlag              // int
	int64Flag            // int64
	floatFlag            // float64
	stringFlag           // string
	intListFlag          // one positive int or a comma-separated list of distinct ones
)

// flagDef is a command-line flag a learner reads. Several learners may
// declare the same name; it then means the same thing to each, and the
// first declaration's kind, default and check are used.
type flagDef struct {
	Name    string
	Aliases []string // other spellings of the same flag ("i" for "iterations")
	Kind    flagKind
	Default string
	// Usage says what the flag means to the learner. The -h text lists,
	// per meaning, the learners that read it.
	Usage string
	// Note, if set, ends the -h text once, after every learner's usage.
	Note string
	// Refuse marks a flag the learner does not read and refuses: set to a
	// value other than its default it is an error "--Name Usage".
	Refuse bool
	// Check, if set, reports a bad value (of any learner's run, so that a
	// bad value is an error before any data is read).
	Check func(f *Flags) error
}

// Flags holds the parsed values of every learner's flags.
type Flags struct {
	vals  map[string]*flagValue
	defs  map[string]flagDef
	order []string
}

// AddFlags defines every registered learner's flags on fs and returns
// their values, to read after fs.Parse.
func AddFlags(fs *flag.FlagSet) *Flags {
	f := &Flags{vals: map[string]*flagValue{}, defs: map[string]flagDef{}}
	usage := map[string][][2]string{} // name -> (usage, learners) in registry order
	for _, d := range sharedFlags {
		f.defs[d.Name] = d
		f.order = append(f.order, d.Name)
		usage[d.Name] = [][2]string{{d.Usage, "every learner"}}
	}
	for _, l := range registry {
		for _, d := range l.flags {
			if d.Refuse {
				continue
			}
			if _, ok := f.defs[d.Name]; !ok {
				f.defs[d.Name] = d
				f.order = append(f.order, d.Name)
			}
			usage[d.Name] = addUsage(usage[d.Name], d.Usage, l.name)
		}
	}
	for _, name := range f.order {
		d := f.defs[name]
		v := &flagValue{kind: d.Kind}
		if err := v.Set(d.Default); err != nil {
			panic(fmt.Sprintf("learner: flag %s: default %q: %v", name, d.Default, err))
		}
		f.vals[name] = v
		var parts []string
		for _, u := range usage[name] {
			parts = append(parts, u[1]+": "+u[0])
		}
		text := strings.Join(parts, "; ")
		if d.Note != "" {
			text += "; " + d.Note
		}
		v.define(fs, name, text)
		for _, a := range d.Aliases {
			v.define(fs, a, "same as --"+name)
		}
	}
	return f
}

// define defines v on fs as name. Scalars are defined through the flag
// package's own typed flags on v's fields, so that -h names their type
// (-C float, -epochs int) as for any other flag.
func (v *flagValue) define(fs *flag.FlagSet, name, text string) {
	switch v.kind {
	case boolFlag:
		fs.BoolVar(&v.b, name, v.b, text)
	case intFlag, int64Flag:
		fs.Int64Var(&v.i, name, v.i, text)
	case floatFlag:
		fs.Float64Var(&v.f, name, v.f, text)
	case stringFlag:
		fs.StringVar(&v.s, name, v.s, text)
	default:
		fs.Var(v, name, text)
		if v.isZero() {
			// flag.PrintDefaults omits a default equal to the String of a
			// new flagValue, which prints as "false".
			fs.Lookup(name).DefValue = (&flagValue{}).String()
		}
	}
}

// addUsage appends learner to the entry of usage u, or adds the entry.
func addUsage(us [][2]string, u, learner string) [][2]string {
	for i := range us {
		if us[i][0] == u {
			us[i][1] += ", " + learner
			return us
		}
	}
	return append(us, [2]string{u, learner})
}

// Build returns the spec of learner name configured by the parsed flags,
// or an error naming the flag at fault.
func Build(name string, f *Flags) (Spec, error) {
	l, ok := lookup(name)
	if !ok {
		return Spec{}, fmt.Errorf("unknown learner %q (want one of %s)", name, strings.Join(Names(), ", "))
	}
	for _, n := range f.order {
		if c := f.defs[n].Check; c != nil {
			if err := c(f); err != nil {
				return Spec{}, err
			}
		}
	}
	for _, k := range f.Ints("k") {
		if k > l.maxFaces() {
			return Spec{}, fmt.Errorf("-k %d: want a number of faces from 1 to %d", k, l.maxFaces())
		}
	}
	for _, d := range l.flags {
		if d.Refuse && !f.isDefault(d.Name) {
			return Spec{}, fmt.Errorf("--%s %s", d.Name, d.Usage)
		}
	}
	cfg, err := l.configure(f)
	if err != nil {
		return Spec{}, err
	}
	mode, _ := scale.ParseMode(f.String("scale")) // checked by scaleFlag
	return Spec{Name: name, Config: cfg, Scale: mode, HashBits: f.Int("hash-bits")}, nil
}

// Summary describes learner name as the flags configure it, for log lines
// ("kperceptron (rbf kernel)").
func Summary(name string, f *Flags) string {
	if l, ok := lookup(name); ok && l.summary != nil {
		return l.summary(f)
	}
	return name
}

func (f *Flags) get(name string, kind flagKind) *flagValue {
	v, ok := f.vals[name]
	if !ok || v.kind != kind {
		panic(fmt.Sprintf("learner: no %v flag %q registered", kind, name))
	}
	return v
}

// Bool returns the value of a bool flag. Bool, Int, Int64, Float, String
// and Ints panic if no learner registers the flag with that kind (a
// programmer error).
func (f *Flags) Bool(name string) bool { return f.get(name, boolFlag).b }

// Int returns the value of an int flag.
func (f *Flags) Int(name string) int { return int(f.get(name, intFlag).i) }

// Int64 returns the value of an int64 flag.
func (f *Flags) Int64(name string) int64 { return f.get(name, int64Flag).i }

// Float returns the value of a float flag.
func (f *Flags) Float(name string) float64 { return f.get(name, floatFlag).f }

// String returns the value of a string flag.
func (f *Flags) String(name string) string { return f.get(name, stringFlag).s }

// Ints returns the values of an int list flag (nil if not given).
func (f *Flags) Ints(name string) []int { return f.get(name, intListFlag).list }

// FloatOf returns the value of the first of names that differs from its
// default, or the first's value: a learner-specific flag and its shared
// alias ("poly-gamma", "gamma").
func (f *Flags) FloatOf(names ...string) float64 {
	for _, n := range names {
		if !f.isDefault(n) {
			return f.Float(n)
		}
	}
	return f.Float(names[0])
}

func (f *Flags) isDefault(name string) bool {
	d := &flagValue{kind: f.defs[name].Kind}
	_ = d.Set(f.defs[name].Default) // checked by AddFlags
	return f.vals[name].String() == d.String()
}

// flagValue is a flag.Value of any flagKind.
type flagValue struct {
	kind flagKind
	b    bool
	i    int64
	f    float64
	s    string
	list []int
}

// isZero reports whether v holds its kind's zero value.
func (v *flagValue) isZero() bool {
	return !v.b && v.i == 0 && v.f == 0 && v.s == "" && v.list == nil
}

func (v *flagValue) IsBoolFlag() bool { return v.kind == boolFlag }

func (v *flagValue) String() string {
	if v == nil {
		return ""
	}
	switch v.kind {
	case boolFlag:
		return strconv.FormatBool(v.b)
	case intFlag, int64Flag:
		return strconv.FormatInt(v.i, 10)
	case floatFlag:
		return strconv.FormatFloat(v.f, 'g', -1, 64)
	case intListFlag:
		var b []string
		for _, x := range v.list {
			b = append(b, strconv.Itoa(x))
		}
		return strings.Join(b, ",")
	}
	return v.s
}

var errParse = errors.New("parse error")

func (v *flagValue) Set(s string) error {
	var err error
	switch v.kind {
	case boolFlag:
		v.b, err = strconv.ParseBool(s)
	case intFlag:
		v.i, err = strconv.ParseInt(s, 0, strconv.IntSize)
	case int64Flag:
		v.i, err = strconv.ParseInt(s, 0, 64)
	case floatFlag:
		v.f, err = strconv.ParseFloat(s, 64)
	case intListFlag:
		return v.setList(s)
	default:
		v.s = s
	}
	if err != nil {
		return errParse
	}
	return nil
}

func (v *flagValue) setList(s string) error {
	if s == "" {
		v.list = nil
		return nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		x, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || x < 1 {
			return fmt.Errorf("%q is not a positive integer", f)
		}
		if slices.Contains(out, x) {
			return fmt.Errorf("%d is listed twice", x)
		}
		out = append(out, x)
	}
	v.list = out
	return nil
}
