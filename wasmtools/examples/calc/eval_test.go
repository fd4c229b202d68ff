package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEval(t *testing.T) {
	ok := []struct {
		in   string
		want string
	}{
		{"1 + 2 * 3", "7"},
		{"(1 + 2) * 3", "9"},
		{"-2 ^ 2", "-4"},
		{"2 ^ 3 ^ 2", "512"},
		{"2 ^ -1", "0.5"},
		{"7 % 3", "1"},
		{"0.1 + 0.2", "0.3"},
		{"--3", "3"},
		{"10 / 4", "2.5"},
		{" .5 * 4 ", "2"},
	}
	for _, c := range ok {
		v, err := Eval(c.in)
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, Format(v), c.in)
	}
	bad := map[string]string{
		"":         "empty",
		"1 +":      "ends too early",
		"(1 + 2":   "missing )",
		"1 / 0":    "division by zero",
		"5 % 0":    "division by zero",
		"2 $ 3":    "unexpected",
		"1.2.3":    "bad number",
		"10 ^ 400": "not a finite number",
	}
	for in, want := range bad {
		_, err := Eval(in)
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), want, in)
	}
}

func FuzzEval(f *testing.F) {
	for _, s := range []string{"1+2", "-(3^2)%4", "((((1))))", "1/0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { _, _ = Eval(s) })
}
