package tune

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// expr is a parsed value expression: numbers, + - * /, parentheses, the
// functions ln, log10, exp and sqrt, and names of other flags. A number
// directly followed by a name or a parenthesis multiplies it ("0.5K").
type expr interface {
	eval(ref func(name string) (float64, error)) (float64, error)
}

type (
	num  float64
	ref  string
	call struct {
		fn  string
		arg expr
	}
	binary struct {
		op   byte
		l, r expr
	}
	neg struct{ x expr }
)

func (n num) eval(func(string) (float64, error)) (float64, error) { return float64(n), nil }

func (r ref) eval(get func(string) (float64, error)) (float64, error) { return get(string(r)) }

func (n neg) eval(get func(string) (float64, error)) (float64, error) {
	v, err := n.x.eval(get)
	return -v, err
}

func (b binary) eval(get func(string) (float64, error)) (float64, error) {
	l, err := b.l.eval(get)
	if err != nil {
		return 0, err
	}
	r, err := b.r.eval(get)
	if err != nil {
		return 0, err
	}
	switch b.op {
	case '+':
		return l + r, nil
	case '-':
		return l - r, nil
	case '*':
		return l * r, nil
	}
	if r == 0 {
		return 0, fmt.Errorf("division by zero")
	}
	return l / r, nil
}

// functions are the functions an expression may call, with the domain
// each needs.
var functions = map[string]struct {
	f      func(float64) float64
	domain func(float64) bool
	need   string
}{
	"ln":    {math.Log, func(x float64) bool { return x > 0 }, "a positive argument"},
	"log10": {math.Log10, func(x float64) bool { return x > 0 }, "a positive argument"},
	"exp":   {math.Exp, func(float64) bool { return true }, ""},
	"sqrt":  {math.Sqrt, func(x float64) bool { return x >= 0 }, "an argument >= 0"},
}

func (c call) eval(get func(string) (float64, error)) (float64, error) {
	x, err := c.arg.eval(get)
	if err != nil {
		return 0, err
	}
	fn := functions[c.fn]
	if !fn.domain(x) {
		return 0, fmt.Errorf("%s(%g): %s needs %s", c.fn, x, c.fn, fn.need)
	}
	return fn.f(x), nil
}

// parseExpr parses s as an expression.
func parseExpr(s string) (expr, error) {
	p := &exprParser{src: s}
	p.next()
	e, err := p.sum()
	if err != nil {
		return nil, fmt.Errorf("%q: %w", s, err)
	}
	if p.tok != "" {
		return nil, fmt.Errorf("%q: unexpected %q", s, p.tok)
	}
	return e, nil
}

// exprParser is a recursive-descent parser over the tokens of src.
type exprParser struct {
	src string
	pos int
	tok string // the current token; "" at the end
}

// next moves to the next token: a number, a name, or one character.
func (p *exprParser) next() {
	for p.pos < len(p.src) && p.src[p.pos] == ' ' {
		p.pos++
	}
	if p.pos >= len(p.src) {
		p.tok = ""
		return
	}
	start := p.pos
	c := rune(p.src[p.pos])
	switch {
	case unicode.IsDigit(c) || c == '.':
		p.pos++
		for p.pos < len(p.src) {
			c := p.src[p.pos]
			if c >= '0' && c <= '9' || c == '.' ||
				(c == 'e' || c == 'E') && p.pos+1 < len(p.src) && strings.ContainsRune("0123456789+-", rune(p.src[p.pos+1])) {
				if c == 'e' || c == 'E' {
					p.pos++ // the sign or first digit of the exponent
				}
				p.pos++
				continue
			}
			break
		}
	case unicode.IsLetter(c) || c == '_':
		for p.pos < len(p.src) {
			c := rune(p.src[p.pos])
			// A hyphen joins two words of a name ("max-iter"); before
			// anything else it is a minus ("K-1").
			hyphen := c == '-' && p.pos+1 < len(p.src) && unicode.IsLetter(rune(p.src[p.pos+1]))
			if !(unicode.IsLetter(c) || unicode.IsDigit(c) || c == '_' || hyphen) {
				break
			}
			p.pos++
		}
	default:
		p.pos++
	}
	p.tok = p.src[start:p.pos]
}

// sum parses term {(+|-) term}.
func (p *exprParser) sum() (expr, error) {
	l, err := p.product()
	for err == nil && (p.tok == "+" || p.tok == "-") {
		op := p.tok[0]
		p.next()
		var r expr
		if r, err = p.product(); err == nil {
			l = binary{op, l, r}
		}
	}
	return l, err
}

// product parses unary {(*|/) unary}.
func (p *exprParser) product() (expr, error) {
	l, err := p.unary()
	for err == nil && (p.tok == "*" || p.tok == "/") {
		op := p.tok[0]
		p.next()
		var r expr
		if r, err = p.unary(); err == nil {
			l = binary{op, l, r}
		}
	}
	return l, err
}

// unary parses [-|+] primary.
func (p *exprParser) unary() (expr, error) {
	switch p.tok {
	case "-":
		p.next()
		x, err := p.unary()
		return neg{x}, err
	case "+":
		p.next()
		return p.unary()
	}
	return p.primary()
}

// primary parses a number (times a following name or parenthesis), a
// name, a call or a parenthesised expression.
func (p *exprParser) primary() (expr, error) {
	tok := p.tok
	switch {
	case tok == "":
		return nil, fmt.Errorf("unexpected end")
	case tok == "(":
		p.next()
		e, err := p.sum()
		if err != nil {
			return nil, err
		}
		if p.tok != ")" {
			return nil, fmt.Errorf("missing )")
		}
		p.next()
		return e, nil
	case unicode.IsDigit(rune(tok[0])) || tok[0] == '.':
		v, err := strconv.ParseFloat(tok, 64)
		if err != nil {
			return nil, fmt.Errorf("bad number %q", tok)
		}
		p.next()
		if p.tok == "(" || p.tok != "" && (unicode.IsLetter(rune(p.tok[0])) || p.tok[0] == '_') {
			r, err := p.primary()
			return binary{'*', num(v), r}, err
		}
		return num(v), nil
	case unicode.IsLetter(rune(tok[0])) || tok[0] == '_':
		p.next()
		if _, ok := functions[strings.ToLower(tok)]; ok && p.tok == "(" {
			arg, err := p.primary()
			return call{strings.ToLower(tok), arg}, err
		}
		return ref(tok), nil
	}
	return nil, fmt.Errorf("unexpected %q", tok)
}
