package devices

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
)

// CPU is the host-memory backend. Every CPU device id names the same
// memory.
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

func (CPU) Free(dlpack.Device, unsafe.Pointer) {}

func (CPU) Sync(dlpack.Device) error { return nil }

// Copy copies src into dst element by element in index order, with runs of
// contiguous elements moved by one copy and 2-D transposes done in tiles.
func (CPU) Copy(dst, src Array) error {
	if len(dst.Shape) != len(src.Shape) || dst.ItemSize != src.ItemSize {
		return errors.New("devices: copy between arrays of different rank or item size")
	}
	for i := range dst.Shape {
		if dst.Shape[i] != src.Shape[i] {
			return fmt.Errorf("devices: copy between shapes %v and %v", dst.Shape, src.Shape)
		}
	}
	if n, _ := Elements(src.Shape); n == 0 {
		return nil
	}
	shape, ds, ss := coalesce(src.Shape, dst.Strides, src.Strides)
	size := int64(src.ItemSize)
	switch {
	case len(shape) == 0:
		copyBytes(dst.Data, src.Data, size)
	case len(shape) == 1 && ds[0] == 1 && ss[0] == 1:
		copyBytes(dst.Data, src.Data, shape[0]*size)
	case len(shape) == 2 && ds[1] == 1 && ss[0] == 1 && (size == 4 || size == 8):
		transpose(dst.Data, src.Data, shape[0], shape[1], ds[0], ss[1], size)
	default:
		strided(dst.Data, src.Data, shape, ds, ss, size)
	}
	return nil
}

// coalesce drops extent-1 dimensions and merges neighbours that are
// contiguous in both arrays, so that most copies become a few long runs.
func coalesce(shape, ds, ss []int64) (outShape, outD, outS []int64) {
	for i := range shape {
		if shape[i] == 1 {
			continue
		}
		n := len(outShape)
		if n > 0 && outD[n-1] == ds[i]*shape[i] && outS[n-1] == ss[i]*shape[i] {
			outShape[n-1] *= shape[i]
			outD[n-1], outS[n-1] = ds[i], ss[i]
			continue
		}
		outShape = append(outShape, shape[i])
		outD = append(outD, ds[i])
		outS = append(outS, ss[i])
	}
	return outShape, outD, outS
}

func copyBytes(dst, src unsafe.Pointer, n int64) {
	copy(unsafe.Slice((*byte)(dst), n), unsafe.Slice((*byte)(src), n))
}

func add(p unsafe.Pointer, elems, size int64) unsafe.Pointer {
	return unsafe.Add(p, elems*size)
}

// strided walks the outer dimensions recursively; the innermost dimension
// is one copy when contiguous in both arrays, else an element loop.
func strided(dst, src unsafe.Pointer, shape, ds, ss []int64, size int64) {
	last := len(shape) - 1
	if last == 0 {
		n := shape[0]
		if ds[0] == 1 && ss[0] == 1 {
			copyBytes(dst, src, n*size)
			return
		}
		for i := int64(0); i < n; i++ {
			copyElem(add(dst, i*ds[0], size), add(src, i*ss[0], size), size)
		}
		return
	}
	for i := int64(0); i < shape[0]; i++ {
		strided(add(dst, i*ds[0], size), add(src, i*ss[0], size), shape[1:], ds[1:], ss[1:], size)
	}
}

func copyElem(dst, src unsafe.Pointer, size int64) {
	switch size {
	case 1:
		*(*uint8)(dst) = *(*uint8)(src)
	case 2:
		*(*uint16)(dst) = *(*uint16)(src)
	case 4:
		*(*uint32)(dst) = *(*uint32)(src)
	case 8:
		*(*uint64)(dst) = *(*uint64)(src)
	default:
		copyBytes(dst, src, size)
	}
}

const tile = 32

// transpose copies a rows x cols array whose source is column-contiguous
// (source stride along rows is 1) into a row-contiguous target, in cache
// tiles.
func transpose(dst, src unsafe.Pointer, rows, cols, dstRow, srcCol, size int64) {
	for r0 := int64(0); r0 < rows; r0 += tile {
		r1 := min(r0+tile, rows)
		for c0 := int64(0); c0 < cols; c0 += tile {
			c1 := min(c0+tile, cols)
			for c := c0; c < c1; c++ {
				if size == 4 {
					for r := r0; r < r1; r++ {
						*(*uint32)(add(dst, r*dstRow+c, 4)) = *(*uint32)(add(src, c*srcCol+r, 4))
					}
					continue
				}
				for r := r0; r < r1; r++ {
					*(*uint64)(add(dst, r*dstRow+c, 8)) = *(*uint64)(add(src, c*srcCol+r, 8))
				}
			}
		}
	}
}
