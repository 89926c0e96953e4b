// Package layouttest makes random N-dimensional layouts (shapes, strides of
// every sign, broadcasts, padding) and copies between them item by item:
// the reference the copy engine's tests compare every backend with.
package layouttest

import "math/rand"

// Shape has ndim extents from 1 to limit, some of them 0 and some 1.
func Shape(r *rand.Rand, ndim int, limit int64) []int64 {
	shape := make([]int64, ndim)
	for i := range shape {
		shape[i] = 1 + r.Int63n(limit)
		switch r.Intn(16) {
		case 0:
			shape[i] = 1
		case 1:
			shape[i] = 0
		}
	}
	return shape
}

// Tiled has two extents up to 150 (past a cache tile of the CPU engine)
// and sometimes a third short one.
func Tiled(r *rand.Rand) []int64 {
	shape := Shape(r, 2, 150)
	if r.Intn(3) == 0 {
		shape = append(shape, 1+r.Int63n(3))
		r.Shuffle(3, func(i, j int) { shape[i], shape[j] = shape[j], shape[i] })
	}
	return shape
}

// Strides picks strides for shape in a random dimension order, with random
// signs and gaps, and stride 0 (a repeated element) in some dimensions when
// repeat is true. It returns them with the item of the element at index 0
// and the length in items of the buffer they need.
func Strides(r *rand.Rand, shape []int64, repeat bool) (strides []int64, base, length int64) {
	strides = make([]int64, len(shape))
	step := int64(1)
	for _, k := range r.Perm(len(shape)) {
		s := step * int64(1+r.Intn(2))
		if repeat && r.Intn(5) == 0 {
			s = 0
		}
		if r.Intn(3) == 0 {
			s = -s
		}
		strides[k] = s
		step = step*max(shape[k], 1)*2 + r.Int63n(3) // not always a multiple
	}
	lo, hi := int64(0), int64(0)
	for k, s := range strides {
		if shape[k] == 0 {
			continue
		}
		if s < 0 {
			lo += (shape[k] - 1) * s
		} else {
			hi += (shape[k] - 1) * s
		}
	}
	return strides, -lo, hi - lo + 1
}

// Copy copies the items of size bytes at every index of shape from src
// (item sbase is index 0, strides ss in items) to dst (dbase, ds).
func Copy(dst []byte, dbase int64, ds []int64, src []byte, sbase int64, ss []int64, shape []int64, size int) {
	for _, n := range shape {
		if n == 0 {
			return
		}
	}
	idx := make([]int64, len(shape))
	for {
		d, s := dbase, sbase
		for k := range idx {
			d += idx[k] * ds[k]
			s += idx[k] * ss[k]
		}
		copy(dst[d*int64(size):(d+1)*int64(size)], src[s*int64(size):(s+1)*int64(size)])
		k := len(idx) - 1
		for ; k >= 0; k-- {
			idx[k]++
			if idx[k] < shape[k] {
				break
			}
			idx[k] = 0
		}
		if k < 0 {
			return
		}
	}
}
