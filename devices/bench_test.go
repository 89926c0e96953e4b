package devices

import (
	"testing"
	"unsafe"
)

const benchBytes = 64 << 20

// BenchmarkContiguousCopy and BenchmarkGoCopy move the same 64 MiB; the
// bench script prints their ratio (goal: the engine at >= 0.9x Go's copy).
func BenchmarkContiguousCopy(b *testing.B) {
	src, dst := make([]byte, benchBytes), make([]byte, benchBytes)
	shape := []int64{benchBytes / 8}
	s := Array{Data: unsafe.Pointer(&src[0]), Shape: shape, Strides: []int64{1}, ItemSize: 8}
	d := Array{Data: unsafe.Pointer(&dst[0]), Shape: shape, Strides: []int64{1}, ItemSize: 8}
	b.SetBytes(benchBytes)
	for b.Loop() {
		_ = CPU{}.Copy(d, s)
	}
}

func BenchmarkGoCopy(b *testing.B) {
	src, dst := make([]byte, benchBytes), make([]byte, benchBytes)
	b.SetBytes(benchBytes)
	for b.Loop() {
		copy(dst, src)
	}
}

// BenchmarkTranspose2D makes a 4096x4096 float32 transpose contiguous, the
// same work as NumPy's np.ascontiguousarray(a.T) in bench/runtime.py.
func BenchmarkTranspose2D(b *testing.B) {
	const n = 4096
	src, dst := make([]float32, n*n), make([]float32, n*n)
	s := Array{Data: unsafe.Pointer(&src[0]), Shape: []int64{n, n}, Strides: []int64{1, n}, ItemSize: 4}
	d := Array{Data: unsafe.Pointer(&dst[0]), Shape: []int64{n, n}, Strides: []int64{n, 1}, ItemSize: 4}
	b.SetBytes(n * n * 4)
	for b.Loop() {
		_ = CPU{}.Copy(d, s)
	}
}
