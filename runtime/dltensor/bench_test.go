//go:build cgo

package dltensor_test

import (
	"testing"

	"github.com/dlgen/dlgen/runtime/dltensor"
)

// BenchmarkExportRelease is one Go-to-consumer round trip: Export, then the
// consumer's deleter (goal: <= 300 ns and 0 Go heap allocations).
func BenchmarkExportRelease(b *testing.B) {
	t, err := dltensor.FromSlice(make([]float32, 1024), 32, 32)
	if err != nil {
		b.Fatal(err)
	}
	defer t.Close()
	b.ReportAllocs()
	for b.Loop() {
		m, err := t.Export()
		if err != nil {
			b.Fatal(err)
		}
		dltensor.DeleteVersioned(m)
	}
}

func benchmarkExchange(b *testing.B, nbytes int) {
	t, err := dltensor.FromSlice(make([]byte, nbytes))
	if err != nil {
		b.Fatal(err)
	}
	defer t.Close()
	for b.Loop() {
		m, err := t.Export()
		if err != nil {
			b.Fatal(err)
		}
		imp, err := dltensor.Import(m)
		if err != nil {
			b.Fatal(err)
		}
		imp.Close()
	}
}

// BenchmarkExchange1KiB and BenchmarkExchange1GiB export a tensor and
// import it back: zero-copy, so both should take the same time.
func BenchmarkExchange1KiB(b *testing.B) { benchmarkExchange(b, 1<<10) }
func BenchmarkExchange1GiB(b *testing.B) { benchmarkExchange(b, 1<<30) }
