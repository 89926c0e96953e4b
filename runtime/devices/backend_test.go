package devices_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
	"github.com/dlgen/dlgen/runtime/devices"
	"github.com/dlgen/dlgen/runtime/devices/devicetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	// PoCL, the OpenCL CI runs on, offers one CPU device unless told
	// otherwise: ask for two, of its two CPU drivers in one platform, so
	// that the suite also copies between devices.
	if _, set := os.LookupEnv("POCL_DEVICES"); !set {
		os.Setenv("POCL_DEVICES", "pthread basic")
	}
	os.Exit(m.Run())
}

func TestCPUPassesTheSuite(t *testing.T) {
	devicetest.Run(t, devicetest.Target{Type: dlpack.DeviceTypeCPU, IDs: []int32{0, 1}})
}

func TestOpenCLPassesTheSuite(t *testing.T) {
	names, err := devices.OpenCLDevices()
	if err != nil {
		devicetest.Unavailable(t, err)
	}
	t.Logf("OpenCL devices: %q", names)
	ids := make([]int32, len(names))
	for i := range ids {
		ids[i] = int32(i)
	}
	devicetest.Run(t, devicetest.Target{Type: dlpack.DeviceTypeOpenCL, IDs: ids, Missing: []int32{-1, int32(len(names))}})
}

// TestOpenCLWithoutPlatformsIsNoBackend runs this test binary again with
// the ICD loader pointed at an empty vendor directory: the loader is there,
// no OpenCL implementation is.
func TestOpenCLWithoutPlatformsIsNoBackend(t *testing.T) {
	if os.Getenv("DLGEN_OPENCL_CHILD") == "1" {
		_, err := devices.For(dlpack.DeviceTypeOpenCL)
		if !errors.Is(err, devices.ErrNoBackend) {
			t.Fatalf("For(kDLOpenCL) = %v", err)
		}
		_, err = devices.OpenCLDevices()
		t.Log(err)
		return
	}
	if _, err := devices.OpenCLDevices(); err != nil {
		devicetest.Unavailable(t, err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestOpenCLWithoutPlatformsIsNoBackend$", "-test.v")
	cmd.Env = append(os.Environ(), "DLGEN_OPENCL_CHILD=1", "OCL_ICD_VENDORS="+t.TempDir(), "OCL_ICD_FILENAMES=")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "devices: no backend for kDLOpenCL: OpenCL not available: no OpenCL platform")
}

func TestOpenCLRefusesViewsOutsideTheBuffer(t *testing.T) {
	if _, err := devices.OpenCLDevices(); err != nil {
		devicetest.Unavailable(t, err)
	}
	dev := dlpack.Device{DeviceType: dlpack.DeviceTypeOpenCL}
	mem, err := devices.Allocate(dev, 64)
	require.NoError(t, err)
	defer func() { assert.NoError(t, devices.Free(dev, mem)) }()
	host := make([]byte, 256)
	h := devices.Array{Device: dlpack.Device{DeviceType: dlpack.DeviceTypeCPU}, Data: unsafe.Pointer(&host[0]), Shape: []int64{16}, Strides: []int64{1}, ItemSize: 4}
	for _, a := range []devices.Array{
		{Device: dev, Data: mem, Shape: []int64{16}, Strides: []int64{1}, ItemSize: 4, ByteOffset: 4},
		{Device: dev, Data: mem, Shape: []int64{16}, Strides: []int64{-1}, ItemSize: 4, ByteOffset: 32},
		{Device: dev, Data: mem, Shape: []int64{16}, Strides: []int64{1 << 61}, ItemSize: 4},
	} {
		assert.ErrorContains(t, devices.Copy(a, h), "reach outside an OpenCL buffer of 64 bytes")
		assert.ErrorContains(t, devices.Copy(h, a), "reach outside an OpenCL buffer of 64 bytes")
	}
}

// TestOpenCLManyGoroutinesOnOneQueue allocates, writes and reads from many
// goroutines on each device at once, all through the device's one queue.
// PoCL 3.1's basic device deadlocked under this when commands were
// enqueued from several threads at once; a hang fails the test after a
// minute instead of running into the test binary's timeout.
func TestOpenCLManyGoroutinesOnOneQueue(t *testing.T) {
	names, err := devices.OpenCLDevices()
	if err != nil {
		devicetest.Unavailable(t, err)
	}
	const workers, rounds, n = 24, 200, 512
	host := dlpack.Device{DeviceType: dlpack.DeviceTypeCPU}
	hostArray := func(b []byte) devices.Array {
		return devices.Array{Device: host, Data: unsafe.Pointer(&b[0]), Shape: []int64{n}, Strides: []int64{1}, ItemSize: 1}
	}
	roundTrip := func(dev dlpack.Device, w, r int) error {
		mem, err := devices.Allocate(dev, n)
		if err != nil {
			return err
		}
		defer func() { _ = devices.Free(dev, mem) }()
		in, out := make([]byte, n), make([]byte, n)
		for i := range in {
			in[i] = byte(w + r + i)
		}
		onDevice := devices.Array{Device: dev, Data: mem, Shape: []int64{n}, Strides: []int64{1}, ItemSize: 1}
		if err := devices.Copy(onDevice, hostArray(in)); err != nil {
			return err
		}
		if err := devices.Copy(hostArray(out), onDevice); err != nil {
			return err
		}
		if string(out) != string(in) {
			return fmt.Errorf("worker %d, round %d on %v: read back other bytes than written", w, r, dev)
		}
		return nil
	}
	errs := make(chan error, workers*len(names))
	var wg sync.WaitGroup
	for id := range names {
		dev := dlpack.Device{DeviceType: dlpack.DeviceTypeOpenCL, DeviceID: int32(id)}
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := range rounds {
					if err := roundTrip(dev, w, r); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(time.Minute):
		t.Fatalf("%d goroutines on %d OpenCL devices have not finished %d round trips each in a minute", workers*len(names), len(names), rounds)
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
