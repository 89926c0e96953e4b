package devices

import (
	"slices"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
)

const benchBytes = 64 << 20

var (
	cpu                = dlpack.Device{DeviceType: dlpack.DeviceTypeCPU}
	benchOnce          sync.Once
	benchSrc, benchDst []byte
)

// buffers returns one pair of 64 MiB buffers, already faulted in, shared by
// the copy benchmarks so that only the code under test differs.
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
// Go's copy of the same 64 MiB in every iteration, so that both see the same
// machine conditions, and reports the median and quartiles of Go's time
// over the engine's (goal: >= 0.9x) with the quartiles of both times.
func BenchmarkContiguousCopyVsGo(b *testing.B) {
	src, dst := buffers()
	shape := []int64{benchBytes / 8}
	s := Array{Device: cpu, Data: unsafe.Pointer(&src[0]), Shape: shape, Strides: []int64{1}, ItemSize: 8}
	d := Array{Device: cpu, Data: unsafe.Pointer(&dst[0]), Shape: shape, Strides: []int64{1}, ItemSize: 8}
	var engine, goCopy, speed []float64
	b.SetBytes(2 * benchBytes)
	for i := 0; b.Loop(); i++ {
		var te, tg time.Duration
		if i%2 == 0 { // alternate which goes first
			te, tg = timed(func() { _ = Copy(d, s) }), timed(func() { copy(dst, src) })
		} else {
			tg, te = timed(func() { copy(dst, src) }), timed(func() { _ = Copy(d, s) })
		}
		engine, goCopy = append(engine, float64(te)), append(goCopy, float64(tg))
		speed = append(speed, float64(tg)/float64(te))
	}
	for q, suffix := range []string{"-q1", "", "-q3"} {
		b.ReportMetric(quantile(engine, q+1), "engine-ns"+suffix)
		b.ReportMetric(quantile(goCopy, q+1), "go-ns"+suffix)
	}
	b.ReportMetric(quantile(speed, 1), "speed-q1")
	b.ReportMetric(quantile(speed, 2), "speed-vs-go")
	b.ReportMetric(quantile(speed, 3), "speed-q3")
}

func timed(f func()) time.Duration {
	t0 := time.Now()
	f()
	return time.Since(t0)
}

// quantile returns the q-th quartile of xs.
func quantile(xs []float64, q int) float64 {
	xs = slices.Sorted(slices.Values(xs))
	return xs[(len(xs)-1)*q/4]
}

// BenchmarkTranspose2D makes a 4096x4096 float32 transpose contiguous as
// Tensor.Contiguous does, allocating the target and copying into it: the
// work of NumPy's np.ascontiguousarray(a.T) in bench/runtime.py.
func BenchmarkTranspose2D(b *testing.B) {
	const n = 4096
	src := make([]float32, n*n)
	for i := range src {
		src[i] = float32(i)
	}
	s := Array{Device: cpu, Data: unsafe.Pointer(&src[0]), Shape: []int64{n, n}, Strides: []int64{1, n}, ItemSize: 4}
	contiguous := func() {
		mem, err := Allocate(cpu, n*n*4)
		if err != nil {
			b.Fatal(err)
		}
		d := Array{Device: cpu, Data: mem, Shape: []int64{n, n}, Strides: []int64{n, 1}, ItemSize: 4}
		if err := Copy(d, s); err != nil {
			b.Fatal(err)
		}
	}
	contiguous() // the heap grows to its working size, untimed, as timeit's NumPy has run before
	b.SetBytes(n * n * 4)
	for b.Loop() {
		contiguous()
	}
}
