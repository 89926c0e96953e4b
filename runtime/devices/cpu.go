package devices

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
)

// CPU is the host-memory backend. Every device id names the same memory,
// and Data is an address whatever the device type says, so CPU can also be
// registered for a device type whose memory the host reads directly.
type CPU struct{}

// MaxAllocation is the largest allocation the CPU backend attempts: Go's
// own limit of its heap on 64-bit systems (a larger make panics).
const MaxAllocation = 1<<48 - 1

// Allocate returns zeroed Go memory; it stays alive as long as a pointer
// to it does, so Free has nothing to do.
func (CPU) Allocate(_ dlpack.Device, nbytes int) (unsafe.Pointer, error) {
	if nbytes < 0 || uint64(nbytes) > MaxAllocation || unsafe.Sizeof(nbytes) == 4 && nbytes > 1<<31-1 {
		return nil, fmt.Errorf("devices: cannot allocate %d bytes", nbytes)
	}
	if nbytes == 0 {
		return nil, nil
	}
	return unsafe.Pointer(unsafe.SliceData(make([]byte, nbytes))), nil
}

// Free does nothing: the garbage collector frees Go memory.
func (CPU) Free(dlpack.Device, unsafe.Pointer) error { return nil }

// Sync does nothing: CPU copies are complete when Copy returns.
func (CPU) Sync(dlpack.Device) error { return nil }

// Copy copies src into dst before it returns. Both Data fields are host
// addresses; the arrays are checked as the package's Copy checks them.
func (CPU) Copy(dst, src Array) error {
	if err := check(dst, src); err != nil {
		return err
	}
	if n, _ := Elements(src.Shape); n == 0 {
		return nil
	}
	size := int64(src.ItemSize)
	dims := make([]dim, 0, len(src.Shape))
	for i, n := range src.Shape {
		dims = append(dims, dim{n, dst.Strides[i] * size, src.Strides[i] * size})
	}
	copyHost(unsafe.Add(dst.Data, dst.ByteOffset), unsafe.Add(src.Data, src.ByteOffset), dims, size)
	return nil
}

// dim is one dimension of a copy: its extent and the destination and
// source strides in bytes.
type dim struct{ n, d, s int64 }

// Large copies are split over goroutines, each moving at least
// parallelBytes (tests lower it), at most one per P.
var (
	parallelBytes int64 = 1 << 20
	maxWorkers          = func() int { return runtime.GOMAXPROCS(0) }
)

// copyHost copies the element at every index of dims from src to dst,
// both addresses of the element at index 0.
func copyHost(dst, src unsafe.Pointer, dims []dim, size int64) {
	dst, src, dims = normalize(dst, src, dims)
	bytes := size
	for _, d := range dims {
		bytes *= d.n
	}
	workers := int64(maxWorkers())
	workers = min(workers, bytes/parallelBytes)
	if workers < 2 || len(dims) == 0 {
		run(dst, src, dims, size)
		return
	}
	// Split the outermost dimension that has room for every worker (or
	// the largest), into chunks of whole tiles.
	k := 0
	for i, d := range dims {
		if d.n >= workers {
			k = i
			break
		}
		if d.n > dims[k].n {
			k = i
		}
	}
	split := dims[k]
	chunk := (split.n + workers - 1) / workers
	if t := side(size); chunk > t {
		chunk = (chunk + t - 1) / t * t
	}
	var wg sync.WaitGroup
	for start := int64(0); start < split.n; start += chunk {
		part := append([]dim(nil), dims...)
		part[k].n = min(chunk, split.n-start)
		d, s := unsafe.Add(dst, start*split.d), unsafe.Add(src, start*split.s)
		if start+chunk >= split.n {
			run(d, s, part, size) // the last part on this goroutine
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(d, s, part, size)
		}()
	}
	wg.Wait()
}

// normalize drops extent-1 dimensions, turns every destination stride
// positive (walking such a dimension from its other end in both arrays),
// orders the dimensions by destination stride, largest first, and merges
// neighbours that are contiguous in both arrays, so that most copies
// become a few long runs.
func normalize(dst, src unsafe.Pointer, in []dim) (unsafe.Pointer, unsafe.Pointer, []dim) {
	dims := make([]dim, 0, len(in))
	for _, d := range in {
		if d.n == 1 {
			continue
		}
		if d.d < 0 {
			dst, src = unsafe.Add(dst, (d.n-1)*d.d), unsafe.Add(src, (d.n-1)*d.s)
			d.d, d.s = -d.d, -d.s
		}
		dims = append(dims, d)
	}
	return dst, src, sortAndMerge(dims)
}

// sortAndMerge orders dims by destination stride, largest first, and
// merges neighbours that are contiguous in both arrays.
func sortAndMerge(dims []dim) []dim {
	slices.SortStableFunc(dims, func(a, b dim) int { return cmp.Compare(b.d, a.d) })
	out := dims[:0]
	for _, d := range dims {
		if n := len(out); n > 0 && out[n-1].d == d.d*d.n && out[n-1].s == d.s*d.n {
			out[n-1] = dim{out[n-1].n * d.n, d.d, d.s}
			continue
		}
		out = append(out, d)
	}
	return out
}

// run copies normalized dims on this goroutine: runs contiguous in both
// arrays by memmove, layouts whose source and destination walk different
// dimensions fastest (transposes) in tiles, anything else element by
// element along the innermost dimension.
func run(dst, src unsafe.Pointer, dims []dim, size int64) {
	k := len(dims) - 1
	if k < 0 {
		copyElements(dst, src, dim{1, size, size}, size)
		return
	}
	inner := dims[k]
	if inner.d == size && inner.s == size {
		n := inner.n * size
		each(dst, src, dims[:k], func(d, s unsafe.Pointer) { copyBytes(d, s, n) })
		return
	}
	j := k // the dimension the source walks fastest
	for i, d := range dims {
		if d.s != 0 && (dims[j].s == 0 || abs(d.s) < abs(dims[j].s)) {
			j = i
		}
	}
	if j == k {
		each(dst, src, dims[:k], func(d, s unsafe.Pointer) { copyElements(d, s, inner, size) })
		return
	}
	rows := dims[j]
	rest := append(append([]dim(nil), dims[:j]...), dims[j+1:k]...)
	each(dst, src, rest, func(d, s unsafe.Pointer) { tiles(d, s, rows, inner, size) })
}

// each calls f with the addresses of every index of dims.
func each(dst, src unsafe.Pointer, dims []dim, f func(dst, src unsafe.Pointer)) {
	if len(dims) == 0 {
		f(dst, src)
		return
	}
	d := dims[0]
	for i := int64(0); i < d.n; i++ {
		each(unsafe.Add(dst, i*d.d), unsafe.Add(src, i*d.s), dims[1:], f)
	}
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

func copyBytes(dst, src unsafe.Pointer, n int64) {
	copy(unsafe.Slice((*byte)(dst), n), unsafe.Slice((*byte)(src), n))
}

// copyElements copies the elements along one dimension.
func copyElements(dst, src unsafe.Pointer, d dim, size int64) {
	switch size {
	case 1:
		for i := int64(0); i < d.n; i++ {
			*(*uint8)(unsafe.Add(dst, i*d.d)) = *(*uint8)(unsafe.Add(src, i*d.s))
		}
	case 2:
		for i := int64(0); i < d.n; i++ {
			*(*uint16)(unsafe.Add(dst, i*d.d)) = *(*uint16)(unsafe.Add(src, i*d.s))
		}
	case 4:
		for i := int64(0); i < d.n; i++ {
			*(*uint32)(unsafe.Add(dst, i*d.d)) = *(*uint32)(unsafe.Add(src, i*d.s))
		}
	case 8:
		for i := int64(0); i < d.n; i++ {
			*(*uint64)(unsafe.Add(dst, i*d.d)) = *(*uint64)(unsafe.Add(src, i*d.s))
		}
	default:
		for i := int64(0); i < d.n; i++ {
			copyBytes(unsafe.Add(dst, i*d.d), unsafe.Add(src, i*d.s), size)
		}
	}
}

// tileSide is the side of a square tile in elements of up to 4 bytes (half
// that for larger ones): 256 rows of 256 four-byte elements are 256 KiB on
// each side, which stay in a core's L2 cache while each destination row is
// written in long runs (larger and smaller tiles measured slower). Tests
// lower it.
var tileSide int64 = 256

func side(size int64) int64 {
	if size > 4 {
		return tileSide / 2
	}
	return tileSide
}

// tiles copies a 2-D block whose source is walked fastest along rows and
// whose destination is walked fastest along cols, in square tiles, so that
// each cache line read or written is used whole while it is in cache.
func tiles(dst, src unsafe.Pointer, rows, cols dim, size int64) {
	if rows.s < 0 {
		dst, src = unsafe.Add(dst, (rows.n-1)*rows.d), unsafe.Add(src, (rows.n-1)*rows.s)
		rows.d, rows.s = -rows.d, -rows.s
	}
	t := side(size)
	for r := int64(0); r < rows.n; r += t {
		tr := dim{min(t, rows.n-r), rows.d, rows.s}
		for c := int64(0); c < cols.n; c += t {
			tc := dim{min(t, cols.n-c), cols.d, cols.s}
			tile(unsafe.Add(dst, r*rows.d+c*cols.d), unsafe.Add(src, r*rows.s+c*cols.s), tr, tc, size)
		}
	}
}

// tile copies one tile: four by four elements at a time where both
// arrays are contiguous in the right direction, element by element at
// the edges and for other layouts.
func tile(dst, src unsafe.Pointer, rows, cols dim, size int64) {
	if (size == 4 || size == 8) && rows.s == size && cols.d == size && rows.n >= 4 && cols.n >= 4 {
		r4, c4 := rows.n&^3, cols.n&^3
		for r := int64(0); r < r4; r += 4 {
			for c := int64(0); c < c4; c += 4 {
				d, s := unsafe.Add(dst, r*rows.d+c*cols.d), unsafe.Add(src, r*rows.s+c*cols.s)
				if size == 4 {
					transpose4x4of4(d, s, rows.d, cols.s)
				} else {
					transpose4x4of8(d, s, rows.d, cols.s)
				}
			}
		}
		if c4 < cols.n {
			tile(unsafe.Add(dst, c4*cols.d), unsafe.Add(src, c4*cols.s), dim{r4, rows.d, rows.s}, dim{cols.n - c4, cols.d, cols.s}, size)
		}
		if r4 < rows.n {
			tile(unsafe.Add(dst, r4*rows.d), unsafe.Add(src, r4*rows.s), dim{rows.n - r4, rows.d, rows.s}, cols, size)
		}
		return
	}
	for r := int64(0); r < rows.n; r++ {
		copyElements(unsafe.Add(dst, r*rows.d), unsafe.Add(src, r*rows.s), cols, size)
	}
}

// transpose4x4of4 copies 4x4 four-byte elements: each source row of four
// is read as two 8-byte words, and each destination row is written as two
// 8-byte words assembled from them.
func transpose4x4of4(dst, src unsafe.Pointer, dstRow, srcCol int64) {
	const lo, hi = 0x00000000ffffffff, 0xffffffff00000000
	s1, s2, s3 := unsafe.Add(src, srcCol), unsafe.Add(src, 2*srcCol), unsafe.Add(src, 3*srcCol)
	a0, a1 := *(*uint64)(src), *(*uint64)(unsafe.Add(src, 8))
	b0, b1 := *(*uint64)(s1), *(*uint64)(unsafe.Add(s1, 8))
	c0, c1 := *(*uint64)(s2), *(*uint64)(unsafe.Add(s2, 8))
	d0, d1 := *(*uint64)(s3), *(*uint64)(unsafe.Add(s3, 8))
	r1, r2, r3 := unsafe.Add(dst, dstRow), unsafe.Add(dst, 2*dstRow), unsafe.Add(dst, 3*dstRow)
	*(*uint64)(dst), *(*uint64)(unsafe.Add(dst, 8)) = a0&lo|b0<<32, c0&lo|d0<<32
	*(*uint64)(r1), *(*uint64)(unsafe.Add(r1, 8)) = a0>>32|b0&hi, c0>>32|d0&hi
	*(*uint64)(r2), *(*uint64)(unsafe.Add(r2, 8)) = a1&lo|b1<<32, c1&lo|d1<<32
	*(*uint64)(r3), *(*uint64)(unsafe.Add(r3, 8)) = a1>>32|b1&hi, c1>>32|d1&hi
}

// transpose4x4of8 copies 4x4 eight-byte elements, a source row at a time.
func transpose4x4of8(dst, src unsafe.Pointer, dstRow, srcCol int64) {
	for c := int64(0); c < 4; c++ {
		s, d := unsafe.Add(src, c*srcCol), unsafe.Add(dst, c*8)
		a, b, e, f := *(*uint64)(s), *(*uint64)(unsafe.Add(s, 8)), *(*uint64)(unsafe.Add(s, 16)), *(*uint64)(unsafe.Add(s, 24))
		*(*uint64)(d) = a
		*(*uint64)(unsafe.Add(d, dstRow)) = b
		*(*uint64)(unsafe.Add(d, 2*dstRow)) = e
		*(*uint64)(unsafe.Add(d, 3*dstRow)) = f
	}
}
