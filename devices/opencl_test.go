//go:build cgo && unix

package devices

import (
	"errors"
	"os"
	"os/exec"
	"testing"
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOpenCLMissingLibraryIsNoBackend(t *testing.T) {
	_, err := loadOpenCL("libdlgen-no-such-opencl.so.1")
	assert.ErrorIs(t, err, ErrNoBackend)
	assert.ErrorContains(t, err, "devices: no backend for kDLOpenCL: OpenCL not available: libdlgen-no-such-opencl.so.1")
}

// TestOpenCLWithoutPlatformsIsNoBackend runs this test binary again with
// the ICD loader pointed at an empty vendor directory: the loader is there,
// no OpenCL implementation is.
func TestOpenCLWithoutPlatformsIsNoBackend(t *testing.T) {
	if os.Getenv("DLGEN_OPENCL_CHILD") == "1" {
		_, err := For(dlpack.DeviceTypeOpenCL)
		if !errors.Is(err, ErrNoBackend) {
			t.Fatalf("For(kDLOpenCL) = %v", err)
		}
		_, err = OpenCLDevices()
		t.Log(err)
		return
	}
	if _, err := OpenCLDevices(); err != nil {
		t.Skipf("no OpenCL to hide: %v", err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestOpenCLWithoutPlatformsIsNoBackend$", "-test.v")
	cmd.Env = append(os.Environ(), "DLGEN_OPENCL_CHILD=1", "OCL_ICD_VENDORS="+t.TempDir(), "OCL_ICD_FILENAMES=")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "devices: no backend for kDLOpenCL: OpenCL not available: no OpenCL platform")
}

func TestOpenCLRefusesViewsOutsideTheBuffer(t *testing.T) {
	if _, err := OpenCLDevices(); err != nil {
		t.Skip(err)
	}
	dev := dlpack.Device{DeviceType: dlpack.DeviceTypeOpenCL}
	mem, err := Allocate(dev, 64)
	require.NoError(t, err)
	defer func() { assert.NoError(t, Free(dev, mem)) }()
	host := make([]byte, 256)
	h := Array{Device: dlpack.Device{DeviceType: dlpack.DeviceTypeCPU}, Data: unsafe.Pointer(&host[0]), Shape: []int64{16}, Strides: []int64{1}, ItemSize: 4}
	for _, a := range []Array{
		{Device: dev, Data: mem, Shape: []int64{16}, Strides: []int64{1}, ItemSize: 4, ByteOffset: 4},
		{Device: dev, Data: mem, Shape: []int64{16}, Strides: []int64{-1}, ItemSize: 4, ByteOffset: 32},
		{Device: dev, Data: mem, Shape: []int64{16}, Strides: []int64{1 << 61}, ItemSize: 4},
	} {
		assert.ErrorContains(t, Copy(a, h), "reach outside an OpenCL buffer of 64 bytes")
		assert.ErrorContains(t, Copy(h, a), "reach outside an OpenCL buffer of 64 bytes")
	}
}
