//go:build cgo

package dltensor_test

import (
	"runtime"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
	"github.com/dlgen/dlgen/runtime/devices"
	"github.com/dlgen/dlgen/runtime/dltensor"
	"github.com/dlgen/dlgen/runtime/dltensor/internal/cproducer"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCloneSharesOwnership(t *testing.T) {
	r := cproducer.New(goodSpec())
	a, err := dltensor.Import(r.Versioned())
	require.NoError(t, err)
	assert.EqualValues(t, 1, a.RefCount())
	b, err := a.Clone()
	require.NoError(t, err)
	assert.EqualValues(t, 2, b.RefCount())
	m, err := b.Export()
	require.NoError(t, err)
	assert.EqualValues(t, 3, a.RefCount(), "two handles and an export")
	b.SetReadOnly()
	assert.False(t, a.ReadOnly(), "read-only is a property of a handle")
	a.Close()
	_, err = a.Clone()
	assert.ErrorIs(t, err, dltensor.ErrClosed)
	dltensor.DeleteVersioned(m)
	assert.Equal(t, 0, r.Calls(), "b still holds the producer's tensor")
	v, err := dltensor.ReadView[float32](b)
	require.NoError(t, err)
	assert.Len(t, v, 6)
	b.Close()
	assert.Equal(t, 1, r.Calls())
}

func TestAccessorsFailAfterClose(t *testing.T) {
	tensor, err := dltensor.FromSlice([]float32{1, 2})
	require.NoError(t, err)
	p, err := tensor.Data()
	require.NoError(t, err)
	assert.NotNil(t, p)
	tensor.Close()
	_, err = tensor.Data()
	assert.ErrorIs(t, err, dltensor.ErrClosed)
	_, err = dltensor.View[float32](tensor)
	assert.ErrorIs(t, err, dltensor.ErrClosed)
	_, err = tensor.ReadBytes()
	assert.ErrorIs(t, err, dltensor.ErrClosed)
	_, err = tensor.Export()
	assert.ErrorIs(t, err, dltensor.ErrClosed)
	_, err = tensor.ExportLegacy()
	assert.ErrorIs(t, err, dltensor.ErrClosed)
	_, err = tensor.Contiguous()
	assert.ErrorIs(t, err, dltensor.ErrClosed)
	assert.Equal(t, []int64{2}, tensor.Shape(), "metadata is Go memory and stays readable")
}

func TestClosedReadOnlyHandleIsClosedNotReadOnly(t *testing.T) {
	tensor, err := dltensor.FromSlice([]float32{1, 2})
	require.NoError(t, err)
	tensor.SetReadOnly()
	tensor.Close()
	_, err = dltensor.View[float32](tensor)
	assert.ErrorIs(t, err, dltensor.ErrClosed)
	assert.NotErrorIs(t, err, dltensor.ErrReadOnly)
	_, err = tensor.Bytes()
	assert.ErrorIs(t, err, dltensor.ErrClosed)
	assert.NotErrorIs(t, err, dltensor.ErrReadOnly)
}

func TestFromCRefusalLeavesTheMemoryWithTheCaller(t *testing.T) {
	freed := 0
	_, err := dltensor.FromC(nil, dltensor.Layout{DataType: dltensor.DataTypeOf[float32](), Shape: []int64{4}}, func(unsafe.Pointer) { freed++ })
	assert.ErrorIs(t, err, dltensor.ErrMalformed)
	assert.Zero(t, freed)
}

// TestDeleteOfNilDoesNothing: a nil tensor (which crashed in C before) and
// a NULL deleter are passed over; a deleter is called once per call.
func TestDeleteOfNilDoesNothing(t *testing.T) {
	dltensor.DeleteVersioned[dlpack.ManagedTensorVersioned](nil) // crashed in C before
	dltensor.DeleteLegacy((*dlpack.ManagedTensor)(nil))
	r := cproducer.New(goodSpec())
	for _, del := range []struct {
		deleter *uintptr
		call    func()
	}{
		{&r.Versioned().Deleter, func() { dltensor.DeleteVersioned(r.Versioned()) }},
		{&r.Legacy().Deleter, func() { dltensor.DeleteLegacy(r.Legacy()) }},
	} {
		before := r.Calls()
		deleter := *del.deleter
		require.NotZero(t, deleter)
		*del.deleter = 0
		del.call()
		assert.Equal(t, before, r.Calls(), "a NULL deleter was called")
		*del.deleter = deleter
		del.call()
		assert.Equal(t, before+1, r.Calls())
	}
}

// TestStridedFromGo makes the transpose of a 2x3 slice, starting at an
// offset, and checks bounds against the slice.
func TestStridedFromGo(t *testing.T) {
	data := []int32{-1, 1, 2, 3, 4, 5, 6}
	tensor, err := dltensor.Strided(data, []int64{3, 2}, []int64{1, 3}, 4)
	require.NoError(t, err)
	defer tensor.Close()
	assert.False(t, tensor.IsContiguous())
	_, err = dltensor.View[int32](tensor)
	assert.ErrorIs(t, err, dltensor.ErrNotContiguous)
	c, err := tensor.Contiguous()
	require.NoError(t, err)
	v, err := dltensor.View[int32](c)
	require.NoError(t, err)
	assert.Equal(t, []int32{1, 4, 2, 5, 3, 6}, v)
	c.Close()

	m, err := tensor.Export()
	require.NoError(t, err)
	assert.Equal(t, uint64(4), m.DLTensor.ByteOffset)
	assert.Equal(t, []int64{1, 3}, unsafe.Slice(m.DLTensor.Strides, 2))
	dltensor.DeleteVersioned(m)

	reversed, err := dltensor.Strided(data, []int64{3}, []int64{-2}, 24) // 6, 4, 2
	require.NoError(t, err)
	c, err = reversed.Contiguous()
	require.NoError(t, err)
	v, _ = dltensor.View[int32](c)
	assert.Equal(t, []int32{6, 4, 2}, v)
	c.Close()
	reversed.Close()

	for name, try := range map[string]func() error{
		"past the end":     func() error { _, err := dltensor.Strided(data, []int64{3, 2}, []int64{1, 3}, 8); return err },
		"before the start": func() error { _, err := dltensor.Strided(data, []int64{2}, []int64{-1}, 0); return err },
		"stride count":     func() error { _, err := dltensor.Strided(data, []int64{2}, []int64{1, 1}, 0); return err },
		"misaligned":       func() error { _, err := dltensor.Strided(data, []int64{2}, []int64{1}, 2); return err },
	} {
		assert.ErrorIs(t, try(), dltensor.ErrMalformed, name)
	}
}

func TestFromCWithDeviceAndByteOffset(t *testing.T) {
	r := cproducer.New(goodSpec())
	buf := unsafe.Slice((*float32)(unsafe.Pointer(&r.Buffer(24)[0])), 6)
	for i := range buf {
		buf[i] = float32(i)
	}
	dev := dlpack.Device{DeviceType: dlpack.DeviceTypeCPU, DeviceID: 2}
	tensor, err := dltensor.FromC(unsafe.Pointer(&buf[0]), dltensor.Layout{Device: dev, DataType: f32, Shape: []int64{2}, ByteOffset: 16}, nil)
	require.NoError(t, err)
	defer tensor.Close()
	assert.Equal(t, dev, tensor.Device())
	v, err := dltensor.View[float32](tensor)
	require.NoError(t, err)
	assert.Equal(t, []float32{4, 5}, v)

	gpu, err := dltensor.FromC(unsafe.Pointer(&cproducer.New(goodSpec()).Buffer(8)[0]), dltensor.Layout{Device: dlpack.Device{DeviceType: dlpack.DeviceTypeROCM}, DataType: f32, Shape: []int64{2}}, nil)
	require.NoError(t, err)
	defer gpu.Close()
	_, err = dltensor.View[float32](gpu)
	assert.ErrorIs(t, err, dltensor.ErrNotOnCPU)
	_, err = gpu.Contiguous()
	assert.ErrorIs(t, err, dltensor.ErrNoBackend)
}

// deviceLog is a backend for kDLExtDev whose memory is host memory: it
// records the device of every allocation.
type deviceLog struct {
	devices.CPU
	mu     sync.Mutex
	allocs []dlpack.Device
}

func (d *deviceLog) Allocate(dev dlpack.Device, n int) (unsafe.Pointer, error) {
	d.mu.Lock()
	d.allocs = append(d.allocs, dev)
	d.mu.Unlock()
	return d.CPU.Allocate(dev, n)
}

func TestCopyToAnotherDeviceIDOfTheSameType(t *testing.T) {
	tensor, err := dltensor.FromSlice([]int16{1, 2, 3})
	require.NoError(t, err)
	defer tensor.Close()
	cpu1 := dlpack.Device{DeviceType: dlpack.DeviceTypeCPU, DeviceID: 1}
	c, err := tensor.CopyTo(cpu1)
	require.NoError(t, err)
	assert.Equal(t, cpu1, c.Device())
	v, err := dltensor.View[int16](c)
	require.NoError(t, err)
	assert.Equal(t, []int16{1, 2, 3}, v)
	same, err := c.Contiguous()
	require.NoError(t, err)
	assert.Equal(t, cpu1, same.Device(), "Contiguous stays on the tensor's own device")
	same.Close()
	c.Close()

	log := &deviceLog{}
	devices.Register(dlpack.DeviceTypeExtDev, log)
	defer devices.Register(dlpack.DeviceTypeExtDev, nil)
	r := cproducer.New(goodSpec())
	values := unsafe.Slice((*float32)(unsafe.Pointer(&r.Buffer(24)[0])), 6)
	copy(values, []float32{1, 2, 3, 4, 5, 6})
	ext, err := dltensor.FromC(unsafe.Pointer(&values[0]), dltensor.Layout{Device: dlpack.Device{DeviceType: dlpack.DeviceTypeExtDev, DeviceID: 0}, DataType: f32, Shape: []int64{6}}, nil)
	require.NoError(t, err)
	defer ext.Close()
	c, err = ext.CopyTo(dlpack.Device{DeviceType: dlpack.DeviceTypeExtDev, DeviceID: 3})
	require.NoError(t, err)
	c.Close()
	assert.Equal(t, []dlpack.Device{{DeviceType: dlpack.DeviceTypeExtDev, DeviceID: 3}}, log.allocs, "the backend is told which device")
	back, err := ext.CopyTo(cpu1)
	require.NoError(t, err, "to the CPU through the device's backend")
	f, err := dltensor.View[float32](back)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2, 3, 4, 5, 6}, f)
	back.Close()

	devices.Register(dlpack.DeviceTypeVPI, &deviceLog{})
	defer devices.Register(dlpack.DeviceTypeVPI, nil)
	_, err = ext.CopyTo(dlpack.Device{DeviceType: dlpack.DeviceTypeVPI})
	assert.ErrorIs(t, err, dltensor.ErrNoBackend, "no backend copies between two device types")
}

func bfloat16() dlpack.DataType {
	return dlpack.DataType{Code: dlpack.DataTypeCodeBfloat, Bits: 16, Lanes: 1}
}

func TestByteViewsForTypesGoLacks(t *testing.T) {
	spec := goodSpec()
	spec.DType, spec.Flags = bfloat16(), dlpack.FlagBitmaskReadOnly
	r := cproducer.New(spec)
	copy(r.Buffer(12), []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	tensor, err := dltensor.Import(r.Versioned())
	require.NoError(t, err)
	defer tensor.Close()
	_, err = dltensor.ReadView[uint16](tensor)
	assert.ErrorIs(t, err, dltensor.ErrElementType)
	_, err = tensor.Bytes()
	assert.ErrorIs(t, err, dltensor.ErrReadOnly)
	b, err := tensor.ReadBytes()
	require.NoError(t, err)
	assert.Equal(t, r.Buffer(12), b, "6 bfloat16 elements, no copy")
	assert.Equal(t, unsafe.Pointer(&r.Buffer(12)[0]), unsafe.Pointer(&b[0]))
}

// TestSubbyteSizesHonourThePaddedFlag: 6 int4 elements are 3 bytes packed
// and 6 bytes padded; the flag travels through export and import.
func TestSubbyteSizesHonourThePaddedFlag(t *testing.T) {
	int4 := dlpack.DataType{Code: dlpack.DataTypeCodeInt, Bits: 4, Lanes: 1}
	for _, padded := range []bool{false, true} {
		spec := goodSpec()
		spec.DType = int4
		if padded {
			spec.Flags = dlpack.FlagBitmaskIsSubbyteTypePadded
		}
		r := cproducer.New(spec)
		tensor, err := dltensor.Import(r.Versioned())
		require.NoError(t, err)
		assert.Equal(t, padded, tensor.SubbytePadded())
		b, err := tensor.Bytes()
		require.NoError(t, err)
		want := map[bool]int{false: 3, true: 6}[padded]
		assert.Len(t, b, want)
		c, err := tensor.Contiguous()
		require.NoError(t, err)
		cb, err := c.Bytes()
		require.NoError(t, err)
		assert.Len(t, cb, want)
		m, err := c.Export()
		require.NoError(t, err)
		assert.Equal(t, padded, m.Flags&dlpack.FlagBitmaskIsSubbyteTypePadded != 0)
		back, err := dltensor.Import(m)
		require.NoError(t, err)
		assert.Equal(t, padded, back.SubbytePadded())
		back.Close()
		c.Close()
		tensor.Close()
	}

	// A packed strided tensor cannot be copied element by element.
	spec := goodSpec()
	spec.DType, spec.Strides = int4, []int64{1, 2}
	tensor, err := dltensor.Import(cproducer.New(spec).Versioned())
	require.NoError(t, err)
	defer tensor.Close()
	_, err = tensor.Contiguous()
	assert.ErrorIs(t, err, dltensor.ErrNotContiguous)
}

func TestLeakReporterMaySwapWhileFinalizersRun(t *testing.T) {
	defer dltensor.SetLeakReporter(nil)
	leaked := dltensor.LeakedImports()
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				dltensor.SetLeakReporter(func([]int64, dlpack.DataType) {})
				r := cproducer.New(goodSpec())
				_, err := dltensor.Import(r.Versioned())
				assert.NoError(t, err)
			}
		}()
	}
	wg.Wait()
	// Every leak is finalized before the next test installs its reporter.
	deadline := time.Now().Add(10 * time.Second)
	for dltensor.LeakedImports() < leaked+200 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	assert.Equal(t, leaked+200, dltensor.LeakedImports())
}

// TestViewOfMisalignedMemoryIsRefused: a producer's byte offset may leave
// elements misaligned for Go; the bytes are still there.
func TestViewOfMisalignedMemoryIsRefused(t *testing.T) {
	spec := goodSpec()
	spec.NDim, spec.Shape, spec.Strides, spec.ByteOffset = 1, []int64{2}, []int64{1}, 2
	tensor, err := dltensor.Import(cproducer.New(spec).Versioned())
	require.NoError(t, err)
	defer tensor.Close()
	_, err = dltensor.View[float32](tensor)
	assert.ErrorIs(t, err, dltensor.ErrElementType)
	b, err := tensor.ReadBytes()
	require.NoError(t, err)
	assert.Len(t, b, 8)
	c, err := tensor.Contiguous()
	require.NoError(t, err)
	defer c.Close()
	_, err = dltensor.View[float32](c)
	assert.NoError(t, err)
}

// TestCloseOfNilIsHarmless: t, err := FromSlice(...); defer t.Close()
// must not panic on the error path.
func TestCloseOfNilIsHarmless(t *testing.T) {
	tensor, err := dltensor.FromSlice([]float32{1, 2}, 3)
	require.EqualError(t, err, "dltensor: shape [3], strides [1] and byte offset 0 reach outside a slice of 2 elements: malformed DLPack tensor")
	require.ErrorIs(t, err, dltensor.ErrMalformed)
	require.Nil(t, tensor)
	assert.NotPanics(t, tensor.Close)
}

// TestEmptyExportHasNullData: DLTensor.data is NULL when the tensor has no
// elements, as the header says, whatever backs the Go slice; Import accepts
// the export back.
func TestEmptyExportHasNullData(t *testing.T) {
	for name, data := range map[string][]float32{"empty slice": {}, "nil slice": nil, "cut slice": make([]float32, 4)[4:]} {
		tensor, err := dltensor.FromSlice(data, 0, 3)
		require.NoError(t, err, name)
		m, err := tensor.Export()
		require.NoError(t, err, name)
		assert.Nil(t, m.DLTensor.Data, name)
		assert.Zero(t, m.DLTensor.ByteOffset, name)
		assert.Equal(t, []int64{0, 3}, unsafe.Slice(m.DLTensor.Shape, 2), name)
		l, err := tensor.ExportLegacy()
		require.NoError(t, err, name)
		assert.Nil(t, l.DLTensor.Data, name)
		dltensor.DeleteLegacy(l)
		back, err := dltensor.Import(m)
		require.NoError(t, err, name)
		assert.Equal(t, []int64{0, 3}, back.Shape(), name)
		back.Close()
		tensor.Close()
	}
}

// TestLegacyExportRefusalsNameWhatIsMissing: a legacy consumer cannot be
// told that a tensor is read-only or that its sub-byte elements are
// padded; both refusals say ErrNeedsVersioned.
func TestLegacyExportRefusalsNameWhatIsMissing(t *testing.T) {
	spec := goodSpec()
	spec.DType = dlpack.DataType{Code: dlpack.DataTypeCodeInt, Bits: 4, Lanes: 1}
	spec.Flags = dlpack.FlagBitmaskIsSubbyteTypePadded
	r := cproducer.New(spec)
	padded, err := dltensor.Import(r.Versioned())
	require.NoError(t, err)
	defer padded.Close()
	_, err = padded.ExportLegacy()
	assert.ErrorIs(t, err, dltensor.ErrNeedsVersioned)
	assert.ErrorContains(t, err, "padded")

	readOnly, err := dltensor.FromSlice([]int32{1})
	require.NoError(t, err)
	defer readOnly.Close()
	readOnly.SetReadOnly()
	_, err = readOnly.ExportLegacy()
	assert.ErrorIs(t, err, dltensor.ErrNeedsVersioned)
	assert.ErrorIs(t, err, dltensor.ErrReadOnly)
}
