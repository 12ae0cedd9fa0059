package learner

import (
	"fmt"
	"slices"
	"strings"
)

// FlagKind is what kind of value a learner flag takes, as Flags.Kind
// reports it.
type FlagKind int

// Flag kinds as Flags.Kind reports them.
const (
	KindNone   FlagKind = iota // no such flag
	KindBool                   // true or false
	KindInt                    // a whole number (int or int64)
	KindFloat                  // a number
	KindString                 // text
	KindInts                   // one whole number, or a list of them (-k)
)

// String returns the kind's name as error messages print it.
func (k FlagKind) String() string {
	return [...]string{"none", "bool", "int", "float", "string", "int list"}[k]
}

// Numeric reports whether the kind takes a number.
func (k FlagKind) Numeric() bool { return k == KindInt || k == KindFloat || k == KindInts }

func (k flagKind) public() FlagKind {
	switch k {
	case boolFlag:
		return KindBool
	case intFlag, int64Flag:
		return KindInt
	case floatFlag:
		return KindFloat
	case stringFlag:
		return KindString
	case intListFlag:
		return KindInts
	}
	return KindNone
}

// Canonical returns the name under which f registers the flag spelled
// name: the name itself, an alias ("i" for "iterations") or either in
// another case ("K" for "k", "c" for "C"). An exact spelling wins over a
// case-insensitive one.
func (f *Flags) Canonical(name string) (string, bool) {
	for _, exact := range []bool{true, false} {
		for _, n := range f.order {
			d := f.defs[n]
			for _, s := range append([]string{d.Name}, d.Aliases...) {
				if s == name || !exact && strings.EqualFold(s, name) {
					return d.Name, true
				}
			}
		}
	}
	return "", false
}

// Kind returns the kind of the flag registered as name (canonical), or
// KindNone.
func (f *Flags) Kind(name string) FlagKind {
	if _, ok := f.defs[name]; !ok {
		return KindNone
	}
	return f.defs[name].Kind.public()
}

// Get returns the value of flag name (canonical) as text, as Set accepts
// it.
func (f *Flags) Get(name string) string { return f.vals[name].String() }

// Set sets flag name (canonical or alias, any case) to value, parsed as
// the command line parses it.
func (f *Flags) Set(name, value string) error {
	c, ok := f.Canonical(name)
	if !ok {
		return fmt.Errorf("no learner flag --%s", name)
	}
	if err := f.vals[c].Set(value); err != nil {
		return fmt.Errorf("--%s %q: %w", c, value, err)
	}
	return nil
}

// Clone returns a copy of f that shares no values with it.
func (f *Flags) Clone() *Flags {
	c := &Flags{vals: make(map[string]*flagValue, len(f.vals)), defs: f.defs, order: f.order}
	for n, v := range f.vals {
		nv := *v
		nv.list = slices.Clone(v.list)
		c.vals[n] = &nv
	}
	return c
}

// Names returns the canonical names of the flags learner name reads (not
// those it refuses), in the order it declares them; nil for an unknown
// learner.
func (f *Flags) Names(learnerName string) []string {
	l, ok := lookup(learnerName)
	if !ok {
		return nil
	}
	var out []string
	for _, d := range append(slices.Clone(sharedFlags), l.flags...) {
		if !d.Refuse && !slices.Contains(out, d.Name) {
			out = append(out, d.Name)
		}
	}
	return out
}

// NumericFlag returns the canonical name of a learner flag that takes a
// number, spelled name exactly as on the command line (a name or an
// alias); ok is false for any other name.
func NumericFlag(name string) (canonical string, ok bool) {
	for _, l := range registry {
		for _, d := range l.flags {
			if d.Refuse || !d.Kind.public().Numeric() {
				continue
			}
			if d.Name == name || slices.Contains(d.Aliases, name) {
				return d.Name, true
			}
		}
	}
	return "", false
}
