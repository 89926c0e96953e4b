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
	assert.EqualError(t, err, "devices: cannot allocate 4611686018427387904 bytes")
}

// requireRule fails t unless err is the refusal of rule, in its words.
func requireRule(t *testing.T, err error, rule dlpack.Rule, words string) {
	t.Helper()
	var broken *dltensor.RuleError
	require.ErrorAs(t, err, &broken)
	assert.Equal(t, rule, broken.Rule)
	assert.Equal(t, words, broken.Message)
	assert.ErrorIs(t, err, dltensor.ErrMalformed)
}

// tooMany is rule size_limit's refusal on this machine's pointer width.
var tooMany = fmt.Sprintf("the tensor holds too many elements: their count and bytes must stay below 2^%d", 8*unsafe.Sizeof(uintptr(0))-1)

func TestFromSliceRejectsOverflowingShapes(t *testing.T) {
	_, err := dltensor.FromSlice([]float32{}, 1<<32, 1<<32) // 2^64 elements wrap to 0
	requireRule(t, err, dlpack.RuleSizeLimit, tooMany)
	_, err = dltensor.FromSlice([]float32{1, 2}, 3, 6148914691236517206) // wraps to 2
	requireRule(t, err, dlpack.RuleSizeLimit, tooMany)
}

// TestWhatGoMakesImportAccepts: dltensor never exports what its own Import
// refuses: what FromSlice and FromC make at the edges of the rules comes
// back through Export and Import as it was, and what they refuse is
// refused by the rule Import names for it.
func TestWhatGoMakesImportAccepts(t *testing.T) {
	roundTrip := func(made *dltensor.Tensor) *dltensor.Tensor {
		t.Helper()
		m, err := made.Export()
		require.NoError(t, err)
		back, err := dltensor.Import(m)
		require.NoError(t, err, "Import refused what dltensor made")
		assert.Equal(t, made.Shape(), back.Shape())
		assert.Equal(t, made.Strides(), back.Strides())
		assert.Equal(t, made.DataType(), back.DataType())
		return back
	}
	shape := make([]int64, dltensor.MaxDims+1)
	for i := range shape {
		shape[i] = 1
	}
	most, err := dltensor.FromSlice([]float32{1}, shape[1:]...)
	require.NoError(t, err, "%d dimensions", dltensor.MaxDims)
	roundTrip(most).Close()
	most.Close()
	_, err = dltensor.FromSlice([]float32{1}, shape...)
	requireRule(t, err, dlpack.RuleNdimRange, fmt.Sprintf("ndim %d is outside [0, %d]", dltensor.MaxDims+1, dltensor.MaxDims))

	r := cproducer.New(goodSpec())
	p := unsafe.Pointer(&r.Buffer(24)[0])
	transposed, err := dltensor.FromC(p, dltensor.Layout{DataType: f32, Shape: []int64{3, 2}, Strides: []int64{1, 3}}, nil)
	require.NoError(t, err)
	roundTrip(transposed).Close()
	transposed.Close()
	empty, err := dltensor.FromC(nil, dltensor.Layout{DataType: f32, Shape: []int64{0, 4}}, nil)
	require.NoError(t, err, "no elements: data may be NULL")
	roundTrip(empty).Close()
	empty.Close()

	_, err = dltensor.FromC(p, dltensor.Layout{DataType: f32, Shape: []int64{1 << 40, 1 << 40}}, nil)
	requireRule(t, err, dlpack.RuleSizeLimit, tooMany)
	_, err = dltensor.FromC(p, dltensor.Layout{DataType: dlpack.DataType{Code: dlpack.DataTypeCodeFloat, Bits: 0, Lanes: 1}, Shape: []int64{4}}, nil)
	requireRule(t, err, dlpack.RuleDtypeZero, "invalid dtype: 0 bits, 1 lanes")
	_, err = dltensor.FromC(nil, dltensor.Layout{DataType: f32, Shape: []int64{4}}, nil)
	requireRule(t, err, dlpack.RuleDataNull, "data is NULL for a tensor with elements (4)")
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
