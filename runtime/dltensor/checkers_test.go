//go:build cgo

package dltensor_test

import (
	"errors"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/dlgen/dlgen/conformance/corpus"
	"github.com/dlgen/dlgen/generated/go/dlpack"
	"github.com/dlgen/dlgen/runtime/dltensor"
	"github.com/dlgen/dlgen/runtime/dltensor/internal/ccheck"
	"github.com/dlgen/dlgen/runtime/dltensor/internal/cproducer"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dltensor checks imports in Go, not with the C helper header's checker
// through cgo: BenchmarkImportCheckCVsGo measured the cgo call as a loss
// (docs/rules.md). These keep the two checkers equal and the benchmark's
// tensors honest.

// TestCCheckerAgreesWithGoOnTheCorpus: for every case of the conformance
// corpus, Import's Go check and the C helper's dlgen_check_versioned or
// dlgen_check_legacy, called through cgo, give the corpus's verdict, rule
// and words.
func TestCCheckerAgreesWithGoOnTheCorpus(t *testing.T) {
	c, err := corpus.Load()
	require.NoError(t, err)
	for _, cc := range c.Cases {
		t.Run(cc.Name, func(t *testing.T) {
			if !cc.For(8 * int(unsafe.Sizeof(uintptr(0)))) {
				t.Skipf("for %d-bit pointers", cc.PointerBits)
			}
			r := produce(cc.Tensor)
			var goErr error
			var rule, message string
			if cc.Tensor.Version == nil {
				goErr = dltensor.GoImportLegacyCheck(r.Legacy())
				rule, message = ccheck.LegacyRefusal(r.Legacy())
			} else {
				goErr = dltensor.GoImportCheck(r.Versioned())
				rule, message = ccheck.VersionedRefusal(r.Versioned())
			}
			if cc.Accept {
				assert.NoError(t, goErr)
				assert.Empty(t, rule, message)
				return
			}
			var broken *dltensor.RuleError
			require.True(t, errors.As(goErr, &broken), "Go accepts what the corpus refuses (%s)", cc.Rule)
			assert.Equal(t, cc.Rule, broken.Rule.String(), "Go's rule")
			assert.Equal(t, cc.Rule, rule, "C's rule")
			assert.Equal(t, cc.Message, broken.Message, "Go's words")
			assert.Equal(t, cc.Message, message, "C's words")
		})
	}
}

// importCheckCases are the tensors BenchmarkImportCheckCVsGo checks, each
// as a versioned and as a legacy tensor: shapes a consumer meets.
var importCheckCases = []struct {
	name string
	spec cproducer.Spec
}{
	{"0-d", cproducer.Spec{DType: dlpack.DataType{Code: dlpack.DataTypeCodeFloat, Bits: 64, Lanes: 1}, BufferBytes: 8}},
	{"1-d-contiguous", cproducer.Spec{
		DType: f32, NDim: 1, Shape: []int64{1024}, Strides: []int64{1}, BufferBytes: 4096,
	}},
	{"4-d-strided", cproducer.Spec{ // NCHW, laid out channels-last
		DType: f32, NDim: 4, Shape: []int64{2, 3, 4, 5}, Strides: []int64{60, 1, 15, 3}, BufferBytes: 480,
	}},
	{"64-d", cproducer.Spec{DType: f32, NDim: 64, Shape: shape64(), Strides: stridesOf(shape64()), BufferBytes: 4 * 6}},
}

// shape64 is 64 dimensions holding 6 elements.
func shape64() []int64 {
	s := slices.Repeat([]int64{1}, 64)
	s[31], s[63] = 2, 3
	return s
}

func stridesOf(shape []int64) []int64 {
	strides, step := make([]int64, len(shape)), int64(1)
	for k := len(shape) - 1; k >= 0; k-- {
		strides[k], step = step, step*shape[k]
	}
	return strides
}

// importCheck is one benchmark case: the same tensor checked both ways.
type importCheck struct {
	name    string
	goCheck func() bool
	cCheck  func() bool
	calls   func() int // the deleter's calls: the checks make none
}

func importChecks() []importCheck {
	var checks []importCheck
	for _, c := range importCheckCases {
		spec := c.spec
		spec.Major, spec.Minor, spec.Device = dlpack.MajorVersion, dlpack.MinorVersion, cpu
		r := cproducer.New(spec)
		checks = append(checks, importCheck{
			name:    "versioned/" + c.name,
			goCheck: func() bool { return dltensor.GoImportCheck(r.Versioned()) == nil },
			cCheck:  func() bool { return dltensor.CImportCheck(r.Versioned()) },
			calls:   r.Calls,
		}, importCheck{
			name:    "legacy/" + c.name,
			goCheck: func() bool { return dltensor.GoImportLegacyCheck(r.Legacy()) == nil },
			cCheck:  func() bool { return dltensor.CImportLegacyCheck(r.Legacy()) },
			calls:   r.Calls,
		})
	}
	return checks
}

// TestImportCheckBenchmarkTensorsPass: both checkers accept every tensor
// the benchmark checks, and neither calls its deleter.
func TestImportCheckBenchmarkTensorsPass(t *testing.T) {
	for _, c := range importChecks() {
		assert.True(t, c.goCheck(), "%s: Go refuses it", c.name)
		assert.True(t, c.cCheck(), "%s: C refuses it", c.name)
		assert.Zero(t, c.calls(), "%s: a check called the deleter", c.name)
	}
}

// checkBatch is how many checks one timing covers: one check takes tens of
// nanoseconds, too little for the clock alone.
const checkBatch = 1000

// BenchmarkImportCheckCVsGo times Import's check of the same tensors in Go
// (the peer, as Import makes it) and with the C helper header's checker
// through cgo (the candidate, as Import would make it: the cgo call with
// the tensor's pointer, then the description copied, as Go copies it).
// Each iteration times checkBatch checks of each, in turns, the order
// alternating, so that both see the same machine; it reports the median
// and quartiles of C's time over Go's in the same iteration (c-vs-go,
// c-vs-go-q1, c-vs-go-q3: above 1 is a loss), the median time per check of
// each (go-ns, c-ns) and of C's extra time (c-extra-ns). bench/runtime.py
// runs it (make bench-runtime).
func BenchmarkImportCheckCVsGo(b *testing.B) {
	for _, c := range importChecks() {
		b.Run(c.name, func(b *testing.B) {
			var goTimes, cTimes, ratios, extra []float64
			for i := 0; b.Loop(); i++ {
				var tg, tc float64
				if i%2 == 0 {
					tg, tc = timeChecks(b, c.goCheck), timeChecks(b, c.cCheck)
				} else {
					tc, tg = timeChecks(b, c.cCheck), timeChecks(b, c.goCheck)
				}
				goTimes, cTimes = append(goTimes, tg), append(cTimes, tc)
				ratios, extra = append(ratios, tc/tg), append(extra, tc-tg)
			}
			b.ReportMetric(quartile(goTimes, 2), "go-ns")
			b.ReportMetric(quartile(cTimes, 2), "c-ns")
			b.ReportMetric(quartile(extra, 2), "c-extra-ns")
			b.ReportMetric(quartile(ratios, 1), "c-vs-go-q1")
			b.ReportMetric(quartile(ratios, 2), "c-vs-go")
			b.ReportMetric(quartile(ratios, 3), "c-vs-go-q3")
		})
	}
}

// timeChecks is the time of one check, in ns, over checkBatch of them.
func timeChecks(b *testing.B, check func() bool) float64 {
	t0 := time.Now()
	for range checkBatch {
		if !check() {
			b.Fatal("a benchmark tensor was refused")
		}
	}
	return float64(time.Since(t0).Nanoseconds()) / checkBatch
}

// quartile is the q-th quartile of xs (2: the median).
func quartile(xs []float64, q int) float64 {
	xs = slices.Sorted(slices.Values(xs))
	return xs[(len(xs)-1)*q/4]
}
