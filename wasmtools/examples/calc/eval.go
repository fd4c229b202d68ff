package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Eval evaluates an arithmetic expression: + - * / % ^, parentheses, unary
// minus and decimals. ^ binds tighter than unary minus and is
// right-associative, so -2^2 is -4 and 2^3^2 is 512.
func Eval(expr string) (float64, error) {
	if strings.TrimSpace(expr) == "" {
		return 0, fmt.Errorf("the expression is empty")
	}
	p := &parser{s: expr}
	v, err := p.expr(0)
	if err != nil {
		return 0, err
	}
	p.skip()
	if p.i < len(p.s) {
		return 0, p.errorf("unexpected %q", p.s[p.i])
	}
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("the result is not a finite number")
	}
	return v, nil
}

// Format prints v without float noise: 0.1+0.2 gives 0.3.
func Format(v float64) string {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 15, 64), 64)
	if math.Abs(r) < 1e15 {
		return strconv.FormatFloat(r, 'f', -1, 64)
	}
	return strconv.FormatFloat(r, 'g', -1, 64)
}

// maxDepth bounds nesting so that "((((..." cannot exhaust the stack.
const maxDepth = 200

type parser struct {
	s string
	i int
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf(format+" at position %d", append(args, p.i+1)...)
}

func (p *parser) skip() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n') {
		p.i++
	}
}

// peek returns the next non-blank byte, or 0 at the end.
func (p *parser) peek() byte {
	p.skip()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

// expr := term (('+' | '-') term)*
func (p *parser) expr(depth int) (float64, error) {
	v, err := p.term(depth)
	for err == nil {
		op := p.peek()
		if op != '+' && op != '-' {
			break
		}
		p.i++
		var r float64
		if r, err = p.term(depth); op == '+' {
			v += r
		} else {
			v -= r
		}
	}
	return v, err
}

// term := unary (('*' | '/' | '%') unary)*
func (p *parser) term(depth int) (float64, error) {
	v, err := p.unary(depth)
	for err == nil {
		op := p.peek()
		if op != '*' && op != '/' && op != '%' {
			break
		}
		at := p.i
		p.i++
		var r float64
		if r, err = p.unary(depth); err != nil {
			break
		}
		switch {
		case op == '*':
			v *= r
		case r == 0:
			p.i = at
			return 0, p.errorf("division by zero")
		case op == '/':
			v /= r
		default:
			v = math.Mod(v, r)
		}
	}
	return v, err
}

// unary := ('-' | '+') unary | power
func (p *parser) unary(depth int) (float64, error) {
	if depth > maxDepth {
		return 0, p.errorf("the expression is nested too deeply")
	}
	switch p.peek() {
	case '-':
		p.i++
		v, err := p.unary(depth + 1)
		return -v, err
	case '+':
		p.i++
		return p.unary(depth + 1)
	}
	return p.power(depth)
}

// power := primary ('^' unary)?
func (p *parser) power(depth int) (float64, error) {
	v, err := p.primary(depth)
	if err != nil || p.peek() != '^' {
		return v, err
	}
	p.i++
	e, err := p.unary(depth + 1)
	return math.Pow(v, e), err
}

// primary := number | '(' expr ')'
func (p *parser) primary(depth int) (float64, error) {
	c := p.peek()
	switch {
	case c == '(':
		p.i++
		v, err := p.expr(depth + 1)
		if err != nil {
			return 0, err
		}
		if p.peek() != ')' {
			return 0, p.errorf("missing )")
		}
		p.i++
		return v, nil
	case c == '.' || c >= '0' && c <= '9':
		start := p.i
		for p.i < len(p.s) && (p.s[p.i] == '.' || p.s[p.i] >= '0' && p.s[p.i] <= '9') {
			p.i++
		}
		v, err := strconv.ParseFloat(p.s[start:p.i], 64)
		if err != nil {
			p.i = start
			return 0, p.errorf("bad number %q", p.s[start:p.i])
		}
		return v, nil
	case c == 0:
		return 0, p.errorf("the expression ends too early")
	}
	return 0, p.errorf("unexpected %q", c)
}
