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

// stridedLayouts are the layouts BenchmarkStridedVsContiguous copies into
// a row-major destination of 64 MiB: transposes of every item size the
// engine specialises, 3-d permutations, a slice with a step, a reversed
// array and broadcasts. srcItems is the length of the source in items.
var stridedLayouts = []struct {
	name           string
	size           int64
	shape, strides []int64
	base, srcItems int64
}{
	{"transpose-4096x4096-float32", 4, []int64{4096, 4096}, []int64{1, 4096}, 0, 1 << 24},
	{"transpose-4000x4000-float32", 4, []int64{4000, 4000}, []int64{1, 4000}, 0, 4000 * 4000},
	{"transpose-4096x2048-float64", 8, []int64{4096, 2048}, []int64{1, 4096}, 0, 1 << 23},
	{"transpose-2048x2048-complex128", 16, []int64{2048, 2048}, []int64{1, 2048}, 0, 1 << 22},
	{"transpose-8192x4096-int16", 2, []int64{8192, 4096}, []int64{1, 8192}, 0, 1 << 25},
	{"transpose-8192x8192-uint8", 1, []int64{8192, 8192}, []int64{1, 8192}, 0, 1 << 26},
	{"permute-256^3-(2,1,0)-float32", 4, []int64{256, 256, 256}, []int64{1, 256, 65536}, 0, 1 << 24},
	{"permute-256^3-(0,2,1)-float32", 4, []int64{256, 256, 256}, []int64{65536, 1, 256}, 0, 1 << 24},
	{"permute-256^3-(1,0,2)-float32", 4, []int64{256, 256, 256}, []int64{256, 65536, 1}, 0, 1 << 24},
	{"permute-64x512x512-(1,2,0)-float32", 4, []int64{512, 512, 64}, []int64{512, 1, 262144}, 0, 1 << 24},
	{"step-2-4096x4096-float32", 4, []int64{4096, 4096}, []int64{8192, 2}, 0, 1 << 25},
	{"reversed-4096x4096-float32", 4, []int64{4096, 4096}, []int64{-4096, -1}, 1<<24 - 1, 1 << 24},
	{"broadcast-row-4096x4096-float32", 4, []int64{4096, 4096}, []int64{0, 1}, 0, 4096},
	{"broadcast-column-4096x4096-float32", 4, []int64{4096, 4096}, []int64{1, 0}, 0, 4096},
}

// BenchmarkStridedVsContiguous alternates, in every iteration, a strided
// copy of each layout into row-major memory and the engine's contiguous
// copy of the same 64 MiB, and reports the median and quartiles of the
// strided time over the contiguous one (goal: a 2-d float32 transpose
// within 2x, any layout within 3x) with the quartiles of both times.
func BenchmarkStridedVsContiguous(b *testing.B) {
	src, dst := buffers()
	flat := []int64{benchBytes / 8}
	cs := Array{Device: cpu, Data: unsafe.Pointer(&src[0]), Shape: flat, Strides: []int64{1}, ItemSize: 8}
	cd := Array{Device: cpu, Data: unsafe.Pointer(&dst[0]), Shape: flat, Strides: []int64{1}, ItemSize: 8}
	out := make([]byte, benchBytes)
	copy(out, src)
	for _, l := range stridedLayouts {
		b.Run(l.name, func(b *testing.B) {
			in := make([]byte, l.srcItems*l.size)
			for i := range in {
				in[i] = byte(i)
			}
			s := Array{Device: cpu, Data: unsafe.Pointer(&in[0]), ByteOffset: uint64(l.base * l.size), Shape: l.shape, Strides: l.strides, ItemSize: int(l.size)}
			d := Array{Device: cpu, Data: unsafe.Pointer(&out[0]), Shape: l.shape, Strides: ContiguousStrides(l.shape), ItemSize: int(l.size)}
			strided := func() {
				if err := Copy(d, s); err != nil {
					b.Fatal(err)
				}
			}
			contiguous := func() { _ = Copy(cd, cs) }
			var ts, tc, ratio []float64
			n, _ := Elements(l.shape)
			b.SetBytes(n * l.size)
			for i := 0; b.Loop(); i++ {
				var a, c time.Duration
				if i%2 == 0 {
					a, c = timed(strided), timed(contiguous)
				} else {
					c, a = timed(contiguous), timed(strided)
				}
				ts, tc = append(ts, float64(a)), append(tc, float64(c))
				ratio = append(ratio, float64(a)/float64(c))
			}
			for q, suffix := range []string{"-q1", "", "-q3"} {
				b.ReportMetric(quantile(ts, q+1), "strided-ns"+suffix)
				b.ReportMetric(quantile(tc, q+1), "contiguous-ns"+suffix)
				b.ReportMetric(quantile(ratio, q+1), "ratio"+suffix)
			}
			b.ReportMetric(float64(n*l.size), "bytes") // after the loop, which resets metrics
			// Noise only adds time: the best times' ratio is the steadiest.
			b.ReportMetric(slices.Min(ts)/slices.Min(tc), "best-ratio")
		})
	}
}
