package devices

import (
	"cmp"
	"math/bits"
	"slices"
)

// A rect is one rectangular copy as OpenCL's clEnqueue*BufferRect takes it:
// region[0] bytes per row, region[1] rows, region[2] slices, with the byte
// offset of its first byte, its row pitch and its slice pitch on each of
// the two sides (0 and 1).
type rect struct {
	region     [3]int64
	off        [2]int64
	row, slice [2]int64
}

// A rectPlan covers a copy with one rectangle per index of loops, whose
// strides (d for side 0, s for side 1) move the rectangle's offsets.
type rectPlan struct {
	first rect
	loops []dim
}

// planRects covers the copy of dims (strides in bytes, d on side 0 and s
// on side 1) whose elements at index 0 lie at byte offsets off0 and off1
// with rectangles: the longest run contiguous on both sides is a row, the
// next dimension rows, the next slices, as far as OpenCL's rules allow
// (positive pitches, a row pitch at least a row, a slice pitch at least
// its rows and a multiple of the row pitch), and the rest loops.
func planRects(in []dim, size, off0, off1 int64) rectPlan {
	var nested, loops []dim
	for _, d := range in {
		switch {
		case d.n == 1 || d.d == 0 && d.s == 0:
			// One place on both sides: copied once.
		case d.d < 0 && d.s < 0:
			off0, off1 = off0+(d.n-1)*d.d, off1+(d.n-1)*d.s
			nested = append(nested, dim{d.n, -d.d, -d.s})
		case d.d > 0 && d.s > 0:
			nested = append(nested, d)
		default:
			loops = append(loops, d)
		}
	}
	nested = sortAndMerge(nested)

	r := rect{region: [3]int64{size, 1, 1}, off: [2]int64{off0, off1}}
	if k := len(nested) - 1; k >= 0 && nested[k].d == size && nested[k].s == size {
		r.region[0] = nested[k].n * size
		nested = nested[:k]
	}
	// take removes and returns the innermost dimension that fits.
	take := func(fits func(d dim) bool) (dim, bool) {
		for i := len(nested) - 1; i >= 0; i-- {
			if d := nested[i]; fits(d) {
				nested = slices.Delete(nested, i, i+1)
				return d, true
			}
		}
		return dim{}, false
	}
	r.row = [2]int64{r.region[0], r.region[0]}
	if y, ok := take(func(d dim) bool { return d.d >= r.region[0] && d.s >= r.region[0] }); ok {
		r.region[1], r.row = y.n, [2]int64{y.d, y.s}
	}
	r.slice = [2]int64{r.region[1] * r.row[0], r.region[1] * r.row[1]}
	if z, ok := take(func(d dim) bool {
		return d.d >= r.slice[0] && d.s >= r.slice[1] && d.d%r.row[0] == 0 && d.s%r.row[1] == 0
	}); ok {
		r.region[2], r.slice = z.n, [2]int64{z.d, z.s}
	}
	return rectPlan{r, append(loops, nested...)}
}

// count is the number of rectangles.
func (p rectPlan) count() int64 {
	n := int64(1)
	for _, d := range p.loops {
		n *= d.n
	}
	return n
}

// direct reports whether the plan is worth running as it is: a few
// rectangles of rows long enough that moving them beats staging.
func (p rectPlan) direct() bool {
	return p.count() <= 8 && (p.first.region[0] >= 64 || p.count()*p.first.region[1]*p.first.region[2] <= 16)
}

// each calls f with every rectangle of the plan until f fails.
func (p rectPlan) each(f func(rect) error) error {
	return eachRect(p.first, p.loops, f)
}

func eachRect(r rect, loops []dim, f func(rect) error) error {
	if len(loops) == 0 {
		return f(r)
	}
	d := loops[0]
	for i := int64(0); i < d.n; i++ {
		next := r
		next.off = [2]int64{r.off[0] + i*d.d, r.off[1] + i*d.s}
		if err := eachRect(next, loops[1:], f); err != nil {
			return err
		}
	}
	return nil
}

// staging lays out the elements of one side of a copy (shape and strides
// in elements) packed in a host buffer, in the order of that side's own
// strides and with their signs, each repeated element (stride 0) once: the
// side then moves to or from the buffer in few long rectangles. It returns
// the buffer's strides in elements, the byte offset of the element at index
// 0 in the buffer and the buffer's length in bytes.
func staging(shape, strides []int64, size int64) (packed []int64, base, length int64) {
	packed = make([]int64, len(shape))
	var order []int
	for k, n := range shape {
		if n > 1 && strides[k] != 0 {
			order = append(order, k)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(abs(strides[b]), abs(strides[a])) })
	step := int64(1)
	for i := len(order) - 1; i >= 0; i-- {
		k := order[i]
		packed[k] = step
		if strides[k] < 0 {
			packed[k] = -step
			base += (shape[k] - 1) * step
		}
		step *= shape[k]
	}
	return packed, base * size, step * size
}

// span returns the byte offsets, relative to the element at index 0, of
// the lowest and one past the highest byte of a non-empty array, and false
// if they overflow an int64.
func span(shape, strides []int64, size int64) (lo, hi int64, ok bool) {
	hi = size
	for k, n := range shape {
		step, of1 := mulOverflows(n-1, abs(strides[k]))
		reach, of2 := mulOverflows(step, size)
		if of1 || of2 || reach > 1<<62 {
			return 0, 0, false
		}
		if strides[k] < 0 {
			lo -= reach
		} else {
			hi += reach
		}
		if lo < -1<<62 || hi > 1<<62 {
			return 0, 0, false
		}
	}
	return lo, hi, true
}

func mulOverflows(a, b int64) (int64, bool) {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	return int64(lo), hi != 0 || lo > 1<<63-1
}
