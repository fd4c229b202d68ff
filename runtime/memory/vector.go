package memory

import (
	"encoding/binary"
	"math"
)

// quantize stores v as int8s with one float32 scale: v is normalized,
// then each component maps to -127..127. Cosine similarity survives
// within about a percent, at a quarter of the bytes.
func quantize(v []float32) []byte {
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	norm = math.Sqrt(norm)
	var peak float64
	for _, x := range v {
		peak = max(peak, math.Abs(float64(x)/norm))
	}
	out := make([]byte, 4, 4+len(v))
	if norm == 0 || peak == 0 || math.IsNaN(peak) || math.IsInf(peak, 0) {
		return append(out, make([]byte, len(v))...) // a zero vector: matches nothing
	}
	scale := peak / 127
	binary.LittleEndian.PutUint32(out, math.Float32bits(float32(scale)))
	for _, x := range v {
		out = append(out, byte(int8(math.Round(float64(x)/norm/scale))))
	}
	return out
}

// normalize returns v scaled to unit length (nil for a zero vector).
func normalize(v []float32) []float32 {
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	if norm == 0 || math.IsNaN(norm) || math.IsInf(norm, 0) {
		return nil
	}
	inv := 1 / math.Sqrt(norm)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

// cosine compares two quantized vectors (integer arithmetic: the query
// is quantized too, which moves scores by well under a percent); a vector
// of another dimension, or a zero one, scores -2, below any real match.
func cosine(q, stored []byte) float64 {
	if len(stored) != len(q) || len(q) < 4 {
		return -2
	}
	var dot, nq, ns int64
	a, b := q[4:], stored[4:len(q)]
	for i := range a {
		x, y := int64(int8(a[i])), int64(int8(b[i]))
		dot += x * y
		nq += x * x
		ns += y * y
	}
	if nq == 0 || ns == 0 {
		return -2
	}
	return float64(dot) / math.Sqrt(float64(nq)*float64(ns))
}

// rrfK is reciprocal rank fusion's constant: 60, as in Cormack et al.
const rrfK = 60

// fuse merges ranked lists of doc ids by reciprocal rank fusion: a doc
// scores the sum of 1/(rrfK+rank) over the lists it is in (rank from 1).
func fuse(lists ...[]uint64) map[uint64]float64 {
	out := make(map[uint64]float64)
	for _, l := range lists {
		for i, id := range l {
			out[id] += 1 / float64(rrfK+i+1)
		}
	}
	return out
}
