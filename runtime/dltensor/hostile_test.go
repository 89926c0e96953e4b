//go:build cgo

package dltensor_test

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
	"github.com/dlgen/dlgen/runtime/dltensor"
	"github.com/dlgen/dlgen/runtime/dltensor/internal/cproducer"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCloseRacingExportFreesOnce races Close against exporters: an export
// must never revive a tensor whose last reference is gone.
func TestCloseRacingExportFreesOnce(t *testing.T) {
	buf := cproducer.New(goodSpec()).Buffer(16) // C memory, as FromC requires
	for i := 0; i < 300; i++ {
		var frees atomic.Int32
		tensor, err := dltensor.FromC(unsafe.Pointer(&buf[0]), dltensor.Layout{DataType: dltensor.DataTypeOf[uint8](), Shape: []int64{16}},
			func(unsafe.Pointer) { frees.Add(1) })
		require.NoError(t, err)
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					m, err := tensor.Export()
					if err != nil {
						return
					}
					dltensor.DeleteVersioned(m)
				}
			}()
		}
		runtime.Gosched()
		tensor.Close()
		wg.Wait()
		require.EqualValues(t, 1, frees.Load(), "iteration %d: the memory was freed %d times", i, frees.Load())
		require.Zero(t, tensor.RefCount(), "iteration %d", i)
	}
}

// guarded returns n bytes that end exactly at an inaccessible page, so
// that reading one byte beyond them faults.
func guarded(t *testing.T, n int) []byte {
	page := syscall.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 2*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	t.Cleanup(func() { syscall.Munmap(mem) })
	require.NoError(t, syscall.Mprotect(mem[page:], syscall.PROT_NONE))
	return mem[page-n : page : page]
}

func float4() dlpack.DataType {
	return dlpack.DataType{Code: dlpack.DataTypeCodeFloat4E2m1fn, Bits: 4, Lanes: 1}
}

// TestPackedFloat4CopyStaysInItsBuffer copies 16 packed float4 elements
// held in 8 bytes that end at a guard page.
func TestPackedFloat4CopyStaysInItsBuffer(t *testing.T) {
	buf := guarded(t, 8)
	for i := range buf {
		buf[i] = byte(i*16 + i)
	}
	r := cproducer.New(cproducer.Spec{Major: dlpack.MajorVersion, Minor: dlpack.MinorVersion, Device: cpu, DType: float4(),
		NDim: 1, Shape: []int64{16}, Strides: []int64{1}})
	r.SetData(unsafe.Pointer(&buf[0]))
	tensor, err := dltensor.Import(r.Versioned())
	require.NoError(t, err)
	defer tensor.Close()
	c, err := tensor.Contiguous()
	require.NoError(t, err)
	defer c.Close()
	m, err := c.Export()
	require.NoError(t, err)
	defer dltensor.DeleteVersioned(m)
	assert.Equal(t, buf, unsafe.Slice((*byte)(m.DLTensor.Data), 8))
}

// TestEmptyImportWithNullDataAndOffset: DLPack allows NULL data for a
// tensor with no elements, whatever its byte_offset.
func TestEmptyImportWithNullDataAndOffset(t *testing.T) {
	spec := goodSpec()
	spec.Shape, spec.NullData, spec.ByteOffset = []int64{0, 3}, true, 16
	tensor, err := dltensor.Import(cproducer.New(spec).Versioned())
	require.NoError(t, err)
	defer tensor.Close()
	v, err := dltensor.View[float32](tensor)
	require.NoError(t, err)
	assert.Empty(t, v)
	c, err := tensor.Contiguous()
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 3}, c.Shape())
	c.Close()
}

// TestContiguousOfHugeBroadcastIsAnError: a stride-0 tensor of 2^59
// elements is valid, but its copy cannot be allocated.
func TestContiguousOfHugeBroadcastIsAnError(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) < 8 {
		t.Skip("with 32-bit pointers a tensor's bytes stay below 2^31: its copy is always attempted")
	}
	spec := goodSpec()
	spec.DType = dltensor.DataTypeOf[float64]()
	spec.NDim, spec.Shape, spec.Strides = 1, []int64{1 << 59}, []int64{0}
	tensor, err := dltensor.Import(cproducer.New(spec).Versioned())
	require.NoError(t, err)
	defer tensor.Close()
	assert.NotPanics(t, func() {
		_, err = tensor.Contiguous()
	})
	assert.Error(t, err)
}

func TestFromSliceRejectsOverflowingShapes(t *testing.T) {
	_, err := dltensor.FromSlice([]float32{}, 1<<32, 1<<32)
	assert.Error(t, err, "2^64 elements wrap to 0")
	_, err = dltensor.FromSlice([]float32{1, 2}, 3, 6148914691236517206)
	assert.Error(t, err, "3 x 6148914691236517206 wraps to 2")
}

// TestWhatGoMakesImportAccepts: dltensor never exports what its own Import
// refuses.
func TestWhatGoMakesImportAccepts(t *testing.T) {
	shape := make([]int64, dltensor.MaxDims+1)
	for i := range shape {
		shape[i] = 1
	}
	_, err := dltensor.FromSlice([]float32{1}, shape...)
	assert.Error(t, err, "65 dimensions")

	p := unsafe.Pointer(&cproducer.New(goodSpec()).Buffer(24)[0])
	_, err = dltensor.FromC(p, dltensor.Layout{DataType: f32, Shape: []int64{1 << 40, 1 << 40}}, nil)
	assert.Error(t, err, "overflowing shape")
	_, err = dltensor.FromC(p, dltensor.Layout{DataType: dlpack.DataType{Code: dlpack.DataTypeCodeFloat, Bits: 0, Lanes: 1}, Shape: []int64{4}}, nil)
	assert.Error(t, err, "0-bit dtype")
	_, err = dltensor.FromC(nil, dltensor.Layout{DataType: f32, Shape: []int64{4}}, nil)
	assert.Error(t, err, "NULL data for 4 elements")
}

// TestIsCopiedOnlyWhenTheConsumerOwnsTheCopy: a copy Go still holds is
// not the consumer's alone.
func TestIsCopiedOnlyWhenTheConsumerOwnsTheCopy(t *testing.T) {
	tensor, err := dltensor.FromSlice([]float32{1, 2, 3})
	require.NoError(t, err)
	defer tensor.Close()
	c, err := tensor.Contiguous()
	require.NoError(t, err)
	defer c.Close()
	m, err := c.Export()
	require.NoError(t, err)
	assert.Zero(t, m.Flags&dlpack.FlagBitmaskIsCopied, "Go can still write the copy")
	dltensor.DeleteVersioned(m)
}

// TestDeleterCalledTwiceIsDiagnosed: a consumer that calls the deleter
// twice gets a diagnosis, not a C double free.
func TestDeleterCalledTwiceIsDiagnosed(t *testing.T) {
	tensor, err := dltensor.FromSlice([]float32{1, 2, 3})
	require.NoError(t, err)
	defer tensor.Close()
	m, err := tensor.Export()
	require.NoError(t, err)
	dltensor.DeleteVersioned(m)
	misuses := dltensor.InvalidDeletes()
	dltensor.DeleteVersioned(m)
	assert.Equal(t, misuses+1, dltensor.InvalidDeletes())
	assert.Zero(t, dltensor.LiveExports())
}

// TestGoMadeTensorsKeepTheLimits: FromC and Strided make the import checks,
// with the same rules and words, on 64-bit and 32-bit pointers alike.
func TestGoMadeTensorsKeepTheLimits(t *testing.T) {
	rule := func(err error) string {
		var broken *dltensor.RuleError
		require.ErrorAs(t, err, &broken)
		return broken.Rule.String()
	}
	last := uint64(^uintptr(0)) // the highest address
	top := cproducer.New(goodSpec())
	top.SetAddress(last - 15) // never read: C writes it, Go only passes it on
	_, err := dltensor.FromC(top.Versioned().DLTensor.Data, dltensor.Layout{DataType: f32, Shape: []int64{2}, ByteOffset: 32}, nil)
	assert.Equal(t, "address_limit", rule(err))
	assert.ErrorContains(t, err, fmt.Sprintf("the elements lie outside the address space: data %d with byte_offset 32", last-15))

	floats := int64((last/2 + 1) / 4) // 2^(P-1) bytes of float32
	one := []float32{1}
	_, err = dltensor.Strided(one, []int64{floats}, []int64{0}, 0)
	assert.Equal(t, "size_limit", rule(err))
	_, err = dltensor.Strided(one, []int64{2}, []int64{floats}, 0)
	assert.Equal(t, "stride_limit", rule(err))
	broadcast, err := dltensor.Strided(one, []int64{floats - 1}, []int64{0}, 0)
	require.NoError(t, err, "one element fewer fits")
	broadcast.Close()
	_, err = dltensor.Strided(one, []int64{1}, []int64{1, 1}, 0)
	assert.Equal(t, "strides_count", rule(err))
	assert.ErrorContains(t, err, "2 strides for 1 dimensions")
}
