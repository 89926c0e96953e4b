package devices

import (
	"sync"
	"testing"
	"time"
	"unsafe"
)

const benchBytes = 64 << 20

var (
	benchOnce          sync.Once
	benchSrc, benchDst []byte
)

// buffers returns one pair of 64 MiB buffers, already faulted in, shared by
// both copy benchmarks so that only the code under test differs.
func buffers() (src, dst []byte) {
	benchOnce.Do(func() {
		benchSrc, benchDst = make([]byte, benchBytes), make([]byte, benchBytes)
		for i := range benchSrc {
			benchSrc[i] = byte(i)
		}
		copy(benchDst, benchSrc)
	})
	return benchSrc, benchDst
}

// BenchmarkContiguousCopyVsGo alternates the engine's contiguous copy and
// Go's copy of the same 64 MiB, so both see the same machine conditions, and
// reports the best time of each and their ratio (goal: >= 0.9x).
func BenchmarkContiguousCopyVsGo(b *testing.B) {
	src, dst := buffers()
	shape := []int64{benchBytes / 8}
	s := Array{Data: unsafe.Pointer(&src[0]), Shape: shape, Strides: []int64{1}, ItemSize: 8}
	d := Array{Data: unsafe.Pointer(&dst[0]), Shape: shape, Strides: []int64{1}, ItemSize: 8}
	engine, goCopy := time.Duration(1<<62), time.Duration(1<<62)
	b.SetBytes(2 * benchBytes)
	for b.Loop() {
		t0 := time.Now()
		_ = CPU{}.Copy(d, s)
		t1 := time.Now()
		copy(dst, src)
		t2 := time.Now()
		engine, goCopy = min(engine, t1.Sub(t0)), min(goCopy, t2.Sub(t1))
	}
	b.ReportMetric(float64(engine.Nanoseconds()), "engine-ns")
	b.ReportMetric(float64(goCopy.Nanoseconds()), "go-ns")
	b.ReportMetric(float64(goCopy)/float64(engine), "speed-vs-go")
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
