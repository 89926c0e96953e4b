//go:build cgo

package dltensor_test

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
	"github.com/dlgen/dlgen/runtime/dltensor"
	"github.com/dlgen/dlgen/runtime/dltensor/internal/cproducer"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	cpu = dlpack.Device{DeviceType: dlpack.DeviceTypeCPU}
	f32 = dltensor.DataTypeOf[float32]()
)

// quiet waits for finalizers and checks that nothing is left alive.
func requireNoLiveExports(t *testing.T) {
	t.Helper()
	assert.Zero(t, dltensor.LiveExports(), "live exports")
}

func TestExportIsZeroCopyAndDeletesOnce(t *testing.T) {
	data := []float32{1, 2, 3, 4, 5, 6}
	tensor, err := dltensor.FromSlice(data, 2, 3)
	require.NoError(t, err)
	m, err := tensor.Export()
	require.NoError(t, err)
	assert.Equal(t, uint32(dlpack.MajorVersion), m.Version.Major)
	assert.Equal(t, unsafe.Pointer(&data[0]), m.DLTensor.Data)
	assert.Equal(t, []int64{2, 3}, unsafe.Slice(m.DLTensor.Shape, 2))
	assert.Equal(t, []int64{3, 1}, unsafe.Slice(m.DLTensor.Strides, 2))
	assert.Equal(t, f32, m.DLTensor.Dtype)
	assert.Zero(t, m.Flags)

	unsafe.Slice((*float32)(m.DLTensor.Data), 6)[4] = 42 // a consumer writes
	assert.Equal(t, float32(42), data[4])

	assert.EqualValues(t, 1, dltensor.LiveExports())
	dltensor.DeleteVersioned(m)
	requireNoLiveExports(t)
	tensor.Close()
	tensor.Close()
}

func TestGoSideClosedFirstKeepsMemoryForTheConsumer(t *testing.T) {
	before := dltensor.LiveTensors()
	tensor, err := dltensor.FromSlice(make([]int64, 1<<16))
	require.NoError(t, err)
	v, err := dltensor.View[int64](tensor)
	require.NoError(t, err)
	v[100] = 7
	m, err := tensor.Export()
	require.NoError(t, err)
	tensor.Close()
	v = nil
	for i := 0; i < 3; i++ {
		runtime.GC()
	}
	assert.Equal(t, int64(7), unsafe.Slice((*int64)(m.DLTensor.Data), 1<<16)[100], "memory must survive until the consumer deletes")
	assert.Equal(t, before+1, dltensor.LiveTensors())
	dltensor.DeleteVersioned(m)
	assert.Equal(t, before, dltensor.LiveTensors())
}

func TestLegacyExport(t *testing.T) {
	tensor, err := dltensor.FromSlice([]uint8{1, 2, 3})
	require.NoError(t, err)
	defer tensor.Close()
	m, err := tensor.ExportLegacy()
	require.NoError(t, err)
	assert.Equal(t, int32(1), m.DLTensor.Ndim)
	dltensor.DeleteLegacy(m)
	requireNoLiveExports(t)

	tensor.SetReadOnly()
	_, err = tensor.ExportLegacy()
	assert.ErrorContains(t, err, "read-only")
	mv, err := tensor.Export()
	require.NoError(t, err)
	assert.Equal(t, dlpack.FlagBitmaskReadOnly, mv.Flags&dlpack.FlagBitmaskReadOnly)
	dltensor.DeleteVersioned(mv)
}

func TestScalarExportHasNullShape(t *testing.T) {
	tensor := dltensor.Scalar(3.5)
	defer tensor.Close()
	m, err := tensor.Export()
	require.NoError(t, err)
	assert.Zero(t, m.DLTensor.Ndim)
	assert.Nil(t, m.DLTensor.Shape)
	assert.Equal(t, 3.5, *(*float64)(m.DLTensor.Data))
	dltensor.DeleteVersioned(m)
}

func goodSpec() cproducer.Spec {
	return cproducer.Spec{
		Major: dlpack.MajorVersion, Minor: dlpack.MinorVersion, Device: cpu, DType: f32,
		NDim: 2, Shape: []int64{2, 3}, Strides: []int64{3, 1}, BufferBytes: 24,
	}
}

func TestImportViewAndClose(t *testing.T) {
	r := cproducer.New(goodSpec())
	tensor, err := dltensor.Import(r.Versioned())
	require.NoError(t, err)
	v, err := dltensor.View[float32](tensor)
	require.NoError(t, err)
	v[5] = 2.5
	assert.Equal(t, float32(2.5), *(*float32)(unsafe.Pointer(&r.Buffer(24)[20])), "the view aliases the producer's memory")
	assert.Equal(t, 0, r.Calls())
	tensor.Close()
	tensor.Close()
	assert.Equal(t, 1, r.Calls())
}

func TestImportRefusesTheSamePointerTwice(t *testing.T) {
	r := cproducer.New(goodSpec())
	tensor, err := dltensor.Import(r.Versioned())
	require.NoError(t, err)
	_, err = dltensor.Import(r.Versioned())
	require.ErrorIs(t, err, dltensor.ErrAlreadyImported)
	assert.NotErrorIs(t, err, dltensor.ErrMalformed)
	assert.Equal(t, 0, r.Calls(), "a refused duplicate must not delete the owner's tensor")
	tensor.Close()
	assert.Equal(t, 1, r.Calls())
}

// TestUnknownDeviceIsHeldNeverRead: a device type the release does not
// know is imported and given back, but never read or copied.
func TestUnknownDeviceIsHeldNeverRead(t *testing.T) {
	for _, device := range []dlpack.DeviceType{99, dlpack.DeviceTypeROCM} {
		spec := goodSpec()
		spec.Device.DeviceType = device
		r := cproducer.New(spec)
		tensor, err := dltensor.Import(r.Versioned())
		require.NoError(t, err)
		_, err = dltensor.View[float32](tensor)
		assert.ErrorIs(t, err, dltensor.ErrNotOnCPU)
		assert.ErrorContains(t, err, fmt.Sprintf("memory on device (%d, 0) cannot be read from the CPU", device))
		_, err = tensor.Bytes()
		assert.ErrorIs(t, err, dltensor.ErrNotOnCPU)
		_, err = dltensor.ReadView[float32](tensor)
		assert.ErrorIs(t, err, dltensor.ErrNotOnCPU)
		_, err = tensor.Contiguous()
		assert.ErrorIs(t, err, dltensor.ErrNoBackend)
		m, err := tensor.Export() // passed on as it came
		require.NoError(t, err)
		assert.Equal(t, device, m.DLTensor.Device.DeviceType)
		dltensor.DeleteVersioned(m)
		tensor.Close()
		assert.Equal(t, 1, r.Calls())
	}
}

// TestHostReadableDevicesAreViewable: pinned and managed host memory is
// read in place, as CPU memory is.
func TestHostReadableDevicesAreViewable(t *testing.T) {
	for _, device := range []dlpack.DeviceType{dlpack.DeviceTypeCUDAHost, dlpack.DeviceTypeROCMHost, dlpack.DeviceTypeCUDAManaged} {
		spec := goodSpec()
		spec.Device.DeviceType = device
		tensor, err := dltensor.Import(cproducer.New(spec).Versioned())
		require.NoError(t, err)
		v, err := dltensor.View[float32](tensor)
		require.NoError(t, err, "%v", device)
		assert.Len(t, v, 6)
		tensor.Close()
	}
}

// TestHostReadableDevicesAreCopiedByTheCPU: a strided tensor on pinned or
// managed host memory is made contiguous, and copied to the CPU, by the CPU
// itself, with no backend for its type; the copy is ordinary CPU memory.
func TestHostReadableDevicesAreCopiedByTheCPU(t *testing.T) {
	for _, device := range []dlpack.DeviceType{dlpack.DeviceTypeCUDAHost, dlpack.DeviceTypeROCMHost, dlpack.DeviceTypeCUDAManaged} {
		spec := goodSpec()
		spec.Device = dlpack.Device{DeviceType: device, DeviceID: 1}
		spec.Shape, spec.Strides = []int64{3, 2}, []int64{1, 3} // the transpose of a row-major 2x3
		r := cproducer.New(spec)
		copy(unsafe.Slice((*float32)(unsafe.Pointer(&r.Buffer(24)[0])), 6), []float32{0, 1, 2, 3, 4, 5})
		tensor, err := dltensor.Import(r.Versioned())
		require.NoError(t, err)
		_, err = dltensor.ReadView[float32](tensor)
		require.ErrorIs(t, err, dltensor.ErrNotContiguous, "%v", device)
		for name, copyOf := range map[string]func() (*dltensor.Tensor, error){
			"Contiguous":  tensor.Contiguous,
			"CopyTo(CPU)": func() (*dltensor.Tensor, error) { return tensor.CopyTo(cpu) },
		} {
			c, err := copyOf()
			require.NoError(t, err, "%s of %v", name, device)
			assert.Equal(t, cpu, c.Device(), "%s of %v", name, device)
			v, err := dltensor.View[float32](c)
			require.NoError(t, err)
			assert.Equal(t, []float32{0, 3, 1, 4, 2, 5}, v, "%s of %v", name, device)
			c.Close()
		}
		tensor.Close()
		assert.Equal(t, 1, r.Calls())
	}
}

func TestNullStridesBefore12MeanContiguous(t *testing.T) {
	spec := goodSpec()
	spec.Minor, spec.Strides = 1, nil
	r := cproducer.New(spec)
	tensor, err := dltensor.Import(r.Versioned())
	require.NoError(t, err)
	assert.Equal(t, []int64{3, 1}, tensor.Strides())
	tensor.Close()
}

// TestLegacyImportIsWritableUnlessSetReadOnly: the legacy format has no
// read-only bit; dlgen reads it as writable (as PyTorch, CuPy and JAX do),
// and SetReadOnly opts in to NumPy's reading.
func TestLegacyImportIsWritableUnlessSetReadOnly(t *testing.T) {
	r := cproducer.New(goodSpec())
	tensor, err := dltensor.ImportLegacy(r.Legacy())
	require.NoError(t, err)
	assert.False(t, tensor.ReadOnly())
	v, err := dltensor.View[float32](tensor)
	require.NoError(t, err)
	v[1] = 3
	tensor.SetReadOnly()
	_, err = dltensor.View[float32](tensor)
	assert.ErrorIs(t, err, dltensor.ErrReadOnly)
	_, err = tensor.ExportLegacy()
	assert.ErrorIs(t, err, dltensor.ErrReadOnly)
	ro, err := dltensor.ReadView[float32](tensor)
	require.NoError(t, err)
	assert.Equal(t, float32(3), ro[1], "a read-only view without a copy")

	c, err := tensor.Contiguous()
	require.NoError(t, err)
	assert.True(t, c.Copied())
	assert.False(t, c.ReadOnly())
	m, err := c.ExportAndClose()
	require.NoError(t, err)
	assert.Equal(t, dlpack.FlagBitmaskIsCopied, m.Flags, "handed over, the copy is the consumer's alone")
	dltensor.DeleteVersioned(m)
	tensor.Close()
	assert.Equal(t, 1, r.Calls())
}

func TestReexportOutlivesTheImport(t *testing.T) {
	r := cproducer.New(goodSpec())
	tensor, err := dltensor.Import(r.Versioned())
	require.NoError(t, err)
	m, err := tensor.Export()
	require.NoError(t, err)
	tensor.Close()
	assert.Equal(t, 0, r.Calls(), "the export still holds the producer's tensor")
	dltensor.DeleteVersioned(m)
	assert.Equal(t, 1, r.Calls())
}

func TestContiguousOfNegativeStrides(t *testing.T) {
	spec := goodSpec()
	spec.Strides = []int64{-3, -1}
	spec.ByteOffset = 20 // the first element is the last float
	r := cproducer.New(spec)
	buf := unsafe.Slice((*float32)(unsafe.Pointer(&r.Buffer(24)[0])), 6)
	for i := range buf {
		buf[i] = float32(i)
	}
	tensor, err := dltensor.Import(r.Versioned())
	require.NoError(t, err)
	defer tensor.Close()
	c, err := tensor.Contiguous()
	require.NoError(t, err)
	defer c.Close()
	v, err := dltensor.View[float32](c)
	require.NoError(t, err)
	assert.Equal(t, []float32{5, 4, 3, 2, 1, 0}, v)
}

func TestCopyToOtherDevicesNeedsABackend(t *testing.T) {
	tensor, err := dltensor.FromSlice([]float32{1})
	require.NoError(t, err)
	defer tensor.Close()
	_, err = tensor.CopyTo(dlpack.Device{DeviceType: dlpack.DeviceTypeROCM})
	assert.EqualError(t, err, "devices: no backend for kDLROCM")
	assert.ErrorIs(t, err, dltensor.ErrNoBackend)
}

func TestFinalizerDeletesAndReportsLeakedImports(t *testing.T) {
	leaked := dltensor.LeakedImports()
	reports := make(chan []int64, 1)
	dltensor.SetLeakReporter(func(shape []int64, _ dlpack.DataType) {
		select {
		case reports <- shape:
		default: // never block the finalizer goroutine
		}
	})
	defer dltensor.SetLeakReporter(nil)
	r := cproducer.New(goodSpec())
	func() {
		_, err := dltensor.Import(r.Versioned())
		require.NoError(t, err)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for r.Calls() == 0 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	assert.Equal(t, 1, r.Calls())
	assert.Equal(t, leaked+1, dltensor.LeakedImports())
	select {
	case shape := <-reports:
		assert.Equal(t, []int64{2, 3}, shape)
	case <-time.After(5 * time.Second):
		t.Fatal("the leak was not reported")
	}
}

func TestViewChecksType(t *testing.T) {
	tensor, err := dltensor.FromSlice([]int32{1, 2})
	require.NoError(t, err)
	defer tensor.Close()
	_, err = dltensor.View[float32](tensor)
	assert.ErrorContains(t, err, "viewed as float32")
	assert.ErrorIs(t, err, dltensor.ErrElementType)
}

// TestConcurrentExportImportRetainRelease hammers shared tensors from 64
// goroutines: run under -race.
func TestConcurrentExportImportRetainRelease(t *testing.T) {
	shared := make([]*dltensor.Tensor, 4)
	for i := range shared {
		var err error
		shared[i], err = dltensor.FromSlice(make([]float64, 256), 16, 16)
		require.NoError(t, err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				src := shared[(g+i)%len(shared)]
				m, err := src.Export()
				if err != nil {
					t.Error(err)
					return
				}
				imp, err := dltensor.Import(m) // a Go consumer of a Go producer
				if err != nil {
					t.Error(err)
					return
				}
				if i%3 == 0 {
					again, err := imp.Export()
					if err != nil {
						t.Error(err)
						return
					}
					go dltensor.DeleteVersioned(again) // deleters from other threads
				}
				imp.Close()
			}
		}(g)
	}
	wg.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for dltensor.LiveExports() != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	requireNoLiveExports(t)
	for _, s := range shared {
		s.Close()
	}
}

func TestDataTypeOfEveryGoNumericType(t *testing.T) {
	dt := func(code dlpack.DataTypeCode, bits uint8) dlpack.DataType {
		return dlpack.DataType{Code: code, Bits: bits, Lanes: 1}
	}
	word := uint8(unsafe.Sizeof(0) * 8)
	assert.Equal(t, dt(dlpack.DataTypeCodeInt, 8), dltensor.DataTypeOf[int8]())
	assert.Equal(t, dt(dlpack.DataTypeCodeInt, 64), dltensor.DataTypeOf[int64]())
	assert.Equal(t, dt(dlpack.DataTypeCodeInt, word), dltensor.DataTypeOf[int]())
	assert.Equal(t, dt(dlpack.DataTypeCodeUInt, 16), dltensor.DataTypeOf[uint16]())
	assert.Equal(t, dt(dlpack.DataTypeCodeUInt, word), dltensor.DataTypeOf[uint]())
	assert.Equal(t, dt(dlpack.DataTypeCodeUInt, word), dltensor.DataTypeOf[uintptr]())
	assert.Equal(t, dt(dlpack.DataTypeCodeFloat, 32), dltensor.DataTypeOf[float32]())
	assert.Equal(t, dt(dlpack.DataTypeCodeComplex, 128), dltensor.DataTypeOf[complex128]())
	assert.Equal(t, dt(dlpack.DataTypeCodeBool, 8), dltensor.DataTypeOf[bool]())
}

// TestFromCFreesOnceInEitherOrder wraps C memory (a C producer's buffer)
// with a free function and checks it runs once, after both the Go side and
// the consumer are done, whichever finishes first.
func TestFromCFreesOnceInEitherOrder(t *testing.T) {
	for _, goFirst := range []bool{true, false} {
		r := cproducer.New(goodSpec())
		buf := r.Buffer(24)
		unsafe.Slice((*float32)(unsafe.Pointer(&buf[0])), 6)[5] = 7
		freed := 0
		tensor, err := dltensor.FromC(unsafe.Pointer(&buf[0]), dltensor.Layout{DataType: f32, Shape: []int64{2, 3}}, func(unsafe.Pointer) { freed++ })
		require.NoError(t, err)
		assert.Equal(t, []int64{3, 1}, tensor.Strides())
		m, err := tensor.Export()
		require.NoError(t, err)
		assert.Equal(t, unsafe.Pointer(&buf[0]), m.DLTensor.Data, "zero-copy")
		assert.Equal(t, float32(7), unsafe.Slice((*float32)(m.DLTensor.Data), 6)[5])
		if goFirst {
			tensor.Close()
			assert.Zero(t, freed, "the export still holds the memory")
			dltensor.DeleteVersioned(m)
		} else {
			dltensor.DeleteVersioned(m)
			assert.Zero(t, freed, "the creator still holds the memory")
			tensor.Close()
		}
		assert.Equal(t, 1, freed)
	}
	_, err := dltensor.FromC(nil, dltensor.Layout{DataType: f32, Shape: []int64{-1}}, nil)
	assert.ErrorContains(t, err, "negative extent")
	_, err = dltensor.FromC(nil, dltensor.Layout{DataType: f32, Shape: []int64{2}, Strides: []int64{1, 1}}, nil)
	assert.ErrorContains(t, err, "2 strides for 1 dimensions")
}
