package jsonw

import (
	"math"
	"strconv"
)

// Writer appends one JSON document to B. The zero value (or Writer{B: buf}
// to reuse buf) is ready; read the result from B. Keys and values are
// separated by commas as they come, so a document is written in order:
//
//	w := jsonw.Writer{B: dst}
//	w.Object()
//	w.Key("seq").Uint(7)
//	w.Key("tags").Array()
//	w.String("a")
//	w.EndArray()
//	w.EndObject()
//	dst = w.B
//
// Methods return w so a key and its value fit on one line.
type Writer struct {
	// B is the buffer written to.
	B []byte
	// more is true when a value was written at the current level: the
	// next key or array element needs a comma first.
	more bool
}

// value starts a value: a comma when one came before at this level.
func (w *Writer) value() {
	if w.more {
		w.B = append(w.B, ',')
	}
	w.more = true
}

// Object opens an object: {.
func (w *Writer) Object() *Writer {
	w.value()
	w.B = append(w.B, '{')
	w.more = false
	return w
}

// EndObject closes the innermost object: }.
func (w *Writer) EndObject() *Writer {
	w.B = append(w.B, '}')
	w.more = true
	return w
}

// Array opens an array: [.
func (w *Writer) Array() *Writer {
	w.value()
	w.B = append(w.B, '[')
	w.more = false
	return w
}

// EndArray closes the innermost array: ].
func (w *Writer) EndArray() *Writer {
	w.B = append(w.B, ']')
	w.more = true
	return w
}

// Key writes an object's key; its value comes next.
func (w *Writer) Key(k string) *Writer {
	w.value()
	w.B = AppendString(w.B, k)
	w.B = append(w.B, ':')
	w.more = false
	return w
}

// String writes s as a JSON string (see [AppendString]).
func (w *Writer) String(s string) *Writer {
	w.value()
	w.B = AppendString(w.B, s)
	return w
}

// Int writes n.
func (w *Writer) Int(n int64) *Writer {
	w.value()
	w.B = strconv.AppendInt(w.B, n, 10)
	return w
}

// Uint writes n.
func (w *Writer) Uint(n uint64) *Writer {
	w.value()
	w.B = strconv.AppendUint(w.B, n, 10)
	return w
}

// Float writes f in its shortest form; NaN and the infinities, which JSON
// cannot express, are written as 0.
func (w *Writer) Float(f float64) *Writer {
	w.value()
	if math.IsNaN(f) || math.IsInf(f, 0) {
		f = 0
	}
	w.B = strconv.AppendFloat(w.B, f, 'g', -1, 64)
	return w
}

// Bool writes true or false.
func (w *Writer) Bool(b bool) *Writer {
	w.value()
	w.B = strconv.AppendBool(w.B, b)
	return w
}

// Null writes null.
func (w *Writer) Null() *Writer {
	w.value()
	w.B = append(w.B, "null"...)
	return w
}

// Raw writes v as it is; v must be one valid JSON value (the caller
// checks, e.g. with fastjson.Validate).
func (w *Writer) Raw(v []byte) *Writer {
	w.value()
	w.B = append(w.B, v...)
	return w
}

// RawString is Raw for a string.
func (w *Writer) RawString(v string) *Writer {
	w.value()
	w.B = append(w.B, v...)
	return w
}

// OptString writes the key and s unless s is empty, as omitempty would.
func (w *Writer) OptString(k, s string) *Writer {
	if s != "" {
		w.Key(k).String(s)
	}
	return w
}
