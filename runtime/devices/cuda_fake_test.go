//go:build cgo && unix

package devices_test

// The CUDA backend against the fake driver of internal/fakecuda: a
// libcuda.so.1 over host memory that records every call and runs a queued
// copy only when something waits for it. These tests prove the backend's
// logic (the calls it makes, their pitches, extents, streams and order, and
// its errors), not any hardware: cuda_gpu_test.go runs on a real GPU.

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
	"github.com/dlgen/dlgen/runtime/devices"
	"github.com/dlgen/dlgen/runtime/devices/devicetest"
	"github.com/dlgen/dlgen/runtime/devices/internal/fakecuda"
	"github.com/dlgen/dlgen/runtime/dltensor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var fake struct {
	once   sync.Once
	path   string
	driver fakecuda.Driver
	err    error
}

// fakeCUDA builds and loads the fake driver once per test binary, and
// registers a backend over it for kDLCUDA until the test ends.
func fakeCUDA(t *testing.T) (fakecuda.Driver, devices.StreamBackend) {
	t.Helper()
	fake.once.Do(func() {
		dir, err := os.MkdirTemp("", "dlgen-fakecuda")
		if err != nil {
			fake.err = err
			return
		}
		// Once loaded, the library is found by its path without its file.
		defer os.RemoveAll(dir)
		if fake.path, fake.err = fakecuda.Build(dir); fake.err != nil {
			return
		}
		if fake.driver, fake.err = fakecuda.Open(fake.path); fake.err != nil {
			return
		}
		_, fake.err = devices.LoadCUDA(fake.path)
	})
	require.NoError(t, fake.err)
	b, err := devices.LoadCUDA(fake.path)
	require.NoError(t, err)
	devices.Register(dlpack.DeviceTypeCUDA, b)
	fake.driver.Heal()
	fake.driver.Log()
	t.Cleanup(func() {
		fake.driver.Heal()
		devices.RestoreCUDA()
	})
	t.Log("the fake CUDA driver: this proves the backend's logic, not the hardware")
	return fake.driver, b
}

func TestCUDAOnTheFakeDriverPassesTheSuite(t *testing.T) {
	fakeCUDA(t)
	devicetest.Run(t, devicetest.Target{Type: dlpack.DeviceTypeCUDA, IDs: []int32{0, 1}, Missing: []int32{-1, 2}})
}

// TestCUDAOnTheFakeDriverServesDltensor: a tensor to the device, made
// contiguous there from a transposed view, and back.
func TestCUDAOnTheFakeDriverServesDltensor(t *testing.T) {
	fakeCUDA(t)
	host, err := dltensor.Strided([]float32{0, 1, 2, 3, 4, 5}, []int64{3, 2}, []int64{1, 3}, 0) // a 2x3's transpose
	require.NoError(t, err)
	defer host.Close()
	onDevice, err := host.CopyTo(cuda1)
	require.NoError(t, err)
	defer onDevice.Close()
	c, err := onDevice.Contiguous()
	require.NoError(t, err)
	defer c.Close()
	assert.Equal(t, cuda1, c.Device())
	back, err := c.CopyTo(cpu)
	require.NoError(t, err)
	defer back.Close()
	v, err := dltensor.View[float32](back)
	require.NoError(t, err)
	assert.Equal(t, []float32{0, 3, 1, 4, 2, 5}, v)
}

var (
	cuda0 = dlpack.Device{DeviceType: dlpack.DeviceTypeCUDA, DeviceID: 0}
	cuda1 = dlpack.Device{DeviceType: dlpack.DeviceTypeCUDA, DeviceID: 1}
)

func on(dev dlpack.Device, data unsafe.Pointer, shape, strides []int64, size int) devices.Array {
	return devices.Array{Device: dev, Data: data, Shape: shape, Strides: strides, ItemSize: size}
}

// calls returns the fake's log since the last call, with allocations and
// streams named by their first appearance (mem1, s1, ...), so that it does
// not depend on what ran before, and without device queries.
func calls(d fakecuda.Driver) []string {
	names := map[string]string{}
	counts := map[byte]int{}
	rename := regexp.MustCompile(`\bd\d+:\d+|\bs\d+\b|\be\d+\b`)
	var out []string
	for _, line := range d.Log() {
		if strings.HasPrefix(line, "cuMemGetAddressRange_v2(") {
			continue
		}
		out = append(out, rename.ReplaceAllStringFunc(line, func(name string) string {
			if names[name] == "" {
				kind := name[0]
				counts[kind]++
				names[name] = map[byte]string{'d': "mem", 's': "s", 'e': "e"}[kind] + fmt.Sprint(counts[kind])
			}
			return names[name]
		}))
	}
	return out
}

// TestCUDAOnTheFakeDriverMakesTheseCalls checks the exact calls of
// allocations, contiguous, 2-D, 3-D, row-by-row and staged copies, syncs
// and frees, on the backend's stream and on named ones.
func TestCUDAOnTheFakeDriverMakesTheseCalls(t *testing.T) {
	driver, _ := fakeCUDA(t)
	mem, err := devices.Allocate(cuda0, 96)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"cuDevicePrimaryCtxRetain(0) = 0",
		"cuStreamCreate(1) = 0 s1",
		"cuMemAlloc_v2(96) = 0 mem1",
		"cuMemsetD8Async(mem1+0, 0, 96, s1) = 0",
		"cuStreamSynchronize(s1) = 0",
	}, calls(driver), "Allocate: the primary context and a stream on first use, memory zeroed before it returns")

	host := make([]float32, 3<<20)
	h := unsafe.Pointer(&host[0])
	// Rows of 2 of 3 float32 every 4 (pitch 16) to a packed 3x2 (pitch 8).
	require.NoError(t, devices.Copy(on(cuda0, mem, []int64{3, 2}, []int64{2, 1}, 4), on(cpu, h, []int64{3, 2}, []int64{4, 1}, 4)))
	// 2 slices of 3 such rows, host slices 64 bytes apart (4 rows).
	require.NoError(t, devices.Copy(on(cuda0, mem, []int64{2, 3, 2}, []int64{6, 2, 1}, 4), on(cpu, h, []int64{2, 3, 2}, []int64{16, 4, 1}, 4)))
	// Contiguous back to the host.
	require.NoError(t, devices.Copy(on(cpu, h, []int64{24}, []int64{1}, 4), on(cuda0, mem, []int64{24}, []int64{1}, 4)))
	// A host pitch past the device's longest (2 MiB in the fake): row by row.
	require.NoError(t, devices.Copy(on(cuda0, mem, []int64{3, 2}, []int64{2, 1}, 4), on(cpu, h, []int64{3, 2}, []int64{1 << 20, 1}, 4)))
	// A transpose: staged on the host, one copy of the packed buffer.
	require.NoError(t, devices.Copy(on(cuda0, mem, []int64{4, 6}, []int64{6, 1}, 4), on(cpu, h, []int64{4, 6}, []int64{1, 4}, 4)))
	// On the device: every other row of 2 float32 to packed rows.
	require.NoError(t, devices.Copy(on(cuda0, mem, []int64{3, 2}, []int64{2, 1}, 4), on(cuda0, unsafe.Add(mem, 48), []int64{3, 2}, []int64{4, 1}, 4)))
	require.NoError(t, devices.Sync(cuda0))
	require.NoError(t, devices.Free(cuda0, mem))
	assert.Equal(t, []string{
		"cuMemcpy2DAsync_v2(dst mem1+0 pitch 8 height 3, src host pitch 16 height 3, 8x3x1 bytes, s1) = 0",
		"cuMemcpy3DAsync_v2(dst mem1+0 pitch 8 height 3, src host pitch 16 height 4, 8x3x2 bytes, s1) = 0",
		"cuMemcpyDtoHAsync_v2(dst host pitch 0 height 0, src mem1+0 pitch 0 height 0, 96x1x1 bytes, s1) = 0",
		"cuMemcpyHtoDAsync_v2(dst mem1+0 pitch 0 height 0, src host pitch 0 height 0, 8x1x1 bytes, s1) = 0",
		"cuMemcpyHtoDAsync_v2(dst mem1+8 pitch 0 height 0, src host pitch 0 height 0, 8x1x1 bytes, s1) = 0",
		"cuMemcpyHtoDAsync_v2(dst mem1+16 pitch 0 height 0, src host pitch 0 height 0, 8x1x1 bytes, s1) = 0",
		"cuMemcpyHtoDAsync_v2(dst mem1+0 pitch 0 height 0, src host pitch 0 height 0, 96x1x1 bytes, s1) = 0",
		"cuMemcpy2DAsync_v2(dst mem1+0 pitch 8 height 3, src mem1+48 pitch 16 height 3, 8x3x1 bytes, s1) = 0",
		"cuStreamSynchronize(s1) = 0",
		"cuStreamSynchronize(s1) = 0",
		"cuMemFree_v2(mem1+0) = 0",
	}, calls(driver), "copies queued on the backend's stream, waited for by Sync; Free waits too")

	// Between devices: read on the source's stream and waited for, then
	// written on the destination's.
	a, err := devices.Allocate(cuda0, 16)
	require.NoError(t, err)
	b, err := devices.Allocate(cuda1, 16)
	require.NoError(t, err)
	driver.Log()
	require.NoError(t, devices.Copy(on(cuda1, b, []int64{4}, []int64{1}, 4), on(cuda0, a, []int64{4}, []int64{1}, 4)))
	require.NoError(t, devices.Sync(cuda1))
	assert.Equal(t, []string{
		"cuMemcpyDtoHAsync_v2(dst host pitch 0 height 0, src mem1+0 pitch 0 height 0, 16x1x1 bytes, s1) = 0",
		"cuStreamSynchronize(s1) = 0",
		"cuMemcpyHtoDAsync_v2(dst mem2+0 pitch 0 height 0, src host pitch 0 height 0, 16x1x1 bytes, s2) = 0",
		"cuStreamSynchronize(s2) = 0",
	}, calls(driver), "between two devices through the host")
	require.NoError(t, devices.Free(cuda0, a))
	require.NoError(t, devices.Free(cuda1, b))
}

// TestCUDAOnTheFakeDriverOrdersStreamsWithEvents puts a copy to the device
// on the per-thread default stream and a copy back on the legacy default
// stream: the handoff between them is an event, not a device sync, and
// without it the fake (which runs a stream's copies only when waited for)
// reads the device before the first copy has run.
func TestCUDAOnTheFakeDriverOrdersStreamsWithEvents(t *testing.T) {
	driver, _ := fakeCUDA(t)
	const n = 256
	mem, err := devices.Allocate(cuda0, n)
	require.NoError(t, err)
	defer func() { assert.NoError(t, devices.Free(cuda0, mem)) }()
	in := make([]byte, n)
	for i := range in {
		in[i] = byte(i + 1)
	}
	roundTrip := func(handoff bool) []byte {
		out := make([]byte, n)
		require.NoError(t, devices.CopyOn(on(cuda0, mem, []int64{n}, []int64{1}, 1), on(cpu, unsafe.Pointer(&in[0]), []int64{n}, []int64{1}, 1), 2))
		if handoff {
			require.NoError(t, devices.Handoff(cuda0, 2, 1))
		}
		require.NoError(t, devices.CopyOn(on(cpu, unsafe.Pointer(&out[0]), []int64{n}, []int64{1}, 1), on(cuda0, mem, []int64{n}, []int64{1}, 1), 1))
		require.NoError(t, devices.Sync(cuda0))
		return out
	}
	driver.Log()
	assert.Equal(t, in, roundTrip(true))
	assert.Equal(t, []string{
		"cuMemcpyHtoDAsync_v2(dst mem1+0 pitch 0 height 0, src host pitch 0 height 0, 256x1x1 bytes, per-thread0) = 0",
		"cuEventCreate(2) = 0 e1",
		"cuEventRecord(e1, per-thread0) = 0",
		"cuStreamWaitEvent(legacy0, e1, 0) = 0",
		"cuEventDestroy_v2(e1) = 0",
		"cuMemcpyDtoHAsync_v2(dst host pitch 0 height 0, src mem1+0 pitch 0 height 0, 256x1x1 bytes, legacy0) = 0",
		"cuStreamSynchronize(legacy0) = 0",
		"cuStreamSynchronize(per-thread0) = 0",
		"cuStreamSynchronize(s1) = 0",
	}, calls(driver))

	// The device memory back to zeros, then the same without the handoff:
	// the legacy stream's copy runs first and reads zeros.
	zeros := make([]byte, n)
	require.NoError(t, devices.Copy(on(cuda0, mem, []int64{n}, []int64{1}, 1), on(cpu, unsafe.Pointer(&zeros[0]), []int64{n}, []int64{1}, 1)))
	require.NoError(t, devices.Sync(cuda0))
	assert.Equal(t, zeros, roundTrip(false), "the fake ran the streams in order without an event: it would hide a missing handoff")

	// dltensor's export for a consumer on another stream: the same event.
	tensor, err := dltensor.FromC(mem, dltensor.Layout{Device: cuda0, DataType: dlpack.DataType{Code: dlpack.DataTypeCodeUInt, Bits: 8, Lanes: 1}, Shape: []int64{n}}, nil)
	require.NoError(t, err)
	driver.Log()
	m, err := tensor.ExportOn(2, 1)
	require.NoError(t, err)
	dltensor.DeleteVersioned(m)
	tensor.Close()
	assert.Equal(t, []string{
		"cuEventCreate(2) = 0 e1",
		"cuEventRecord(e1, per-thread0) = 0",
		"cuStreamWaitEvent(legacy0, e1, 0) = 0",
		"cuEventDestroy_v2(e1) = 0",
	}, calls(driver), "an export for another stream waits with an event, no sync")

	require.NoError(t, devices.Handoff(cuda0, 2, 2))
	require.NoError(t, devices.Handoff(cuda0, 2, -1))
	assert.Empty(t, calls(driver), "the same stream, or -1 (no synchronisation), needs no event")
	for _, stream := range []int64{0, -2} {
		assert.ErrorContains(t, devices.Handoff(cuda0, 2, stream), "CUDA stream")
		assert.ErrorContains(t, devices.CopyOn(on(cuda0, mem, []int64{n}, []int64{1}, 1), on(cpu, unsafe.Pointer(&in[0]), []int64{n}, []int64{1}, 1), stream), "CUDA stream")
	}
	assert.ErrorContains(t, devices.Handoff(cuda0, 1, 0), "stream 0 is ambiguous and the array API disallows it")
	other, err := devices.Allocate(cuda1, n)
	require.NoError(t, err)
	defer func() { assert.NoError(t, devices.Free(cuda1, other)) }()
	assert.ErrorContains(t, devices.CopyOn(on(cuda1, other, []int64{n}, []int64{1}, 1), on(cuda0, mem, []int64{n}, []int64{1}, 1), 1),
		"from CUDA device 0 to CUDA device 1 goes through the host, on no one stream")
	assert.ErrorContains(t, devices.CopyOn(on(cpu, unsafe.Pointer(&in[0]), []int64{n}, []int64{1}, 1), on(cpu, unsafe.Pointer(&zeros[0]), []int64{n}, []int64{1}, 1), 1),
		"has no streams")
}

// TestCUDAOnTheFakeDriverSyncWaitsForAConcurrentSync: a Sync that begins
// while another is waiting for a stream returns only once that stream's
// copies are done, though the other Sync took them from the pending list.
func TestCUDAOnTheFakeDriverSyncWaitsForAConcurrentSync(t *testing.T) {
	driver, _ := fakeCUDA(t)
	const n = 64
	mem, err := devices.Allocate(cuda0, n)
	require.NoError(t, err)
	defer func() { assert.NoError(t, devices.Free(cuda0, mem)) }()
	in, out := make([]byte, n), make([]byte, n)
	for i := range in {
		in[i] = byte(i + 1)
	}
	require.NoError(t, devices.Copy(on(cuda0, mem, []int64{n}, []int64{1}, 1), on(cpu, unsafe.Pointer(&in[0]), []int64{n}, []int64{1}, 1)))
	require.NoError(t, devices.Sync(cuda0))
	// A copy back on the per-thread default stream, which the fake runs
	// only when something waits for that stream.
	require.NoError(t, devices.CopyOn(on(cpu, unsafe.Pointer(&out[0]), []int64{n}, []int64{1}, 1), on(cuda0, mem, []int64{n}, []int64{1}, 1), 2))
	driver.HoldSync()
	first := make(chan error)
	go func() { first <- devices.Sync(cuda0) }()
	driver.HeldSync() // the first Sync holds the per-thread stream's copy, not yet waited for
	second := make(chan []byte)
	go func() {
		assert.NoError(t, devices.Sync(cuda0))
		second <- append([]byte(nil), out...)
	}()
	select {
	case seen := <-second: // returned while the first still waits: the copy has not run
		driver.ReleaseSync()
		require.NoError(t, <-first)
		assert.Equal(t, in, seen, "the second Sync returned before the copy it had to wait for ran")
	case <-time.After(100 * time.Millisecond): // it waits, as it should
		driver.ReleaseSync()
		require.NoError(t, <-first)
		assert.Equal(t, in, <-second)
	}
}

// TestCUDAOnTheFakeDriverErrors makes each kind of driver call fail: the
// error names the call and its CUresult, and what failed is undone.
func TestCUDAOnTheFakeDriverErrors(t *testing.T) {
	driver, _ := fakeCUDA(t)

	_, err := devices.LoadCUDA("libdlgen-no-such-cuda.so.1")
	assert.ErrorIs(t, err, devices.ErrNoBackend)
	assert.ErrorContains(t, err, "devices: no backend for kDLCUDA: CUDA not available: libdlgen-no-such-cuda.so.1")

	driver.Fail("cuInit", fakecuda.ErrorNoDevice, 0, 1)
	_, err = devices.LoadCUDA(fake.path)
	assert.ErrorIs(t, err, devices.ErrNoBackend)
	assert.EqualError(t, err, "devices: no backend for kDLCUDA: CUDA not available: cuInit: CUDA_ERROR_NO_DEVICE (100)")

	driver.SetDevices(0)
	_, err = devices.LoadCUDA(fake.path)
	driver.SetDevices(2)
	assert.EqualError(t, err, "devices: no backend for kDLCUDA: CUDA not available: the driver sees no CUDA device")

	// A context that cannot be made is tried again on the next use.
	b, err := devices.LoadCUDA(fake.path)
	require.NoError(t, err)
	driver.Fail("cuDevicePrimaryCtxRetain", fakecuda.ErrorInvalidContext, 0, 1)
	_, err = b.Allocate(cuda1, 16)
	assert.EqualError(t, err, "devices: CUDA device 1 (dlgen fake CUDA device 1): cuDevicePrimaryCtxRetain: CUDA_ERROR_INVALID_CONTEXT (201)")
	mem, err := b.Allocate(cuda1, 16)
	require.NoError(t, err)
	require.NoError(t, b.Free(cuda1, mem))

	// A context whose stream cannot be made is released before the next try.
	b, err = devices.LoadCUDA(fake.path)
	require.NoError(t, err)
	driver.Log()
	driver.Fail("cuStreamCreate", fakecuda.ErrorOutOfMemory, 0, 1)
	_, err = b.Allocate(cuda1, 16)
	assert.EqualError(t, err, "devices: CUDA device 1 (dlgen fake CUDA device 1): cuStreamCreate: CUDA_ERROR_OUT_OF_MEMORY (2)")
	assert.Equal(t, []string{
		"cuDevicePrimaryCtxRetain(1) = 0",
		"cuStreamCreate(1) = 2 -",
		"cuDevicePrimaryCtxRelease_v2(1) = 0",
	}, calls(driver), "the primary context retained for a stream that failed is released")

	_, err = devices.Allocate(cuda0, 2<<30)
	assert.EqualError(t, err, "devices: CUDA device 0 (dlgen fake CUDA device 0): allocating 2147483648 bytes: cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (2)")

	driver.Log()
	driver.Fail("cuMemsetD8Async", fakecuda.ErrorInvalidValue, 0, 1)
	_, err = devices.Allocate(cuda0, 64)
	assert.EqualError(t, err, "devices: CUDA device 0 (dlgen fake CUDA device 0): allocating 64 bytes: cuMemsetD8Async: CUDA_ERROR_INVALID_VALUE (1)")
	log := calls(driver)
	assert.Equal(t, "cuMemFree_v2(mem1+0) = 0", log[len(log)-1], "memory that could not be zeroed is freed")

	mem, err = devices.Allocate(cuda0, 64)
	require.NoError(t, err)
	defer func() { assert.NoError(t, devices.Free(cuda0, mem)) }()
	host := make([]byte, 256)
	h := on(cpu, unsafe.Pointer(&host[0]), []int64{16}, []int64{1}, 4)
	d := on(cuda0, mem, []int64{16}, []int64{1}, 4)

	driver.Fail("cuCtxPushCurrent_v2", fakecuda.ErrorInvalidContext, 0, 1)
	assert.EqualError(t, devices.Copy(d, h), "devices: CUDA device 0 (dlgen fake CUDA device 0): cuCtxPushCurrent_v2: CUDA_ERROR_INVALID_CONTEXT (201)")
	driver.Fail("cuMemcpyHtoDAsync_v2", fakecuda.ErrorInvalidValue, 0, 1)
	assert.EqualError(t, devices.Copy(d, h), "devices: CUDA device 0 (dlgen fake CUDA device 0): cuMemcpyHtoDAsync_v2: CUDA_ERROR_INVALID_VALUE (1)")
	driver.Fail("cuMemcpy2DAsync_v2", fakecuda.ErrorInvalidValue, 0, 1)
	assert.ErrorContains(t, devices.Copy(on(cuda0, mem, []int64{4, 2}, []int64{4, 1}, 4), on(cpu, unsafe.Pointer(&host[0]), []int64{4, 2}, []int64{2, 1}, 4)),
		"cuMemcpy2DAsync_v2: CUDA_ERROR_INVALID_VALUE (1)")
	driver.Fail("cuStreamSynchronize", 700, 0, 1)
	assert.EqualError(t, devices.Sync(cuda0), "devices: CUDA device 0 (dlgen fake CUDA device 0): cuStreamSynchronize: an unknown CUresult (700)")
	driver.Fail("cuEventRecord", fakecuda.ErrorInvalidContext, 0, 1)
	assert.EqualError(t, devices.Handoff(cuda0, 2, 1), "devices: CUDA device 0 (dlgen fake CUDA device 0): cuEventRecord: CUDA_ERROR_INVALID_CONTEXT (201)")
	driver.Log()
	driver.Fail("cuMemFree_v2", fakecuda.ErrorInvalidValue, 0, 1)
	other, err := devices.Allocate(cuda0, 8)
	require.NoError(t, err)
	assert.ErrorContains(t, devices.Free(cuda0, other), "cuMemFree_v2: CUDA_ERROR_INVALID_VALUE (1)")
	require.NoError(t, devices.Free(cuda0, other))

	for _, a := range []devices.Array{
		{Device: cuda0, Data: mem, Shape: []int64{16}, Strides: []int64{1}, ItemSize: 4, ByteOffset: 4},
		{Device: cuda0, Data: mem, Shape: []int64{16}, Strides: []int64{-1}, ItemSize: 4, ByteOffset: 32},
		{Device: cuda0, Data: mem, Shape: []int64{16}, Strides: []int64{1 << 61}, ItemSize: 4},
	} {
		assert.ErrorContains(t, devices.Copy(a, h), "reach outside a CUDA allocation of 64 bytes")
		assert.ErrorContains(t, devices.Copy(h, a), "reach outside a CUDA allocation of 64 bytes")
	}
	driver.Fail("cuMemGetAddressRange_v2", 500, 0, 1)
	assert.ErrorContains(t, devices.Copy(d, h), "cuMemGetAddressRange_v2: CUDA_ERROR_NOT_FOUND (500)")
}
