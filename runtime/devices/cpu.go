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
	stream := bytes >= streamBytes
	workers := int64(maxWorkers())
	workers = min(workers, bytes/parallelBytes)
	if workers < 2 || len(dims) == 0 {
		run(dst, src, dims, size, stream)
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
			run(d, s, part, size, stream) // the last part on this goroutine
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(d, s, part, size, stream)
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
// element along the innermost dimension. stream says the whole copy has at
// least streamBytes.
func run(dst, src unsafe.Pointer, dims []dim, size int64, stream bool) {
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
	each(dst, src, rest, func(d, s unsafe.Pointer) { tiles(d, s, rows, inner, size, stream) })
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
