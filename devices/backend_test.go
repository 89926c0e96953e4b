package devices_test

import (
	"os"
	"testing"

	"github.com/dlgen/dlgen/devices"
	"github.com/dlgen/dlgen/devices/devicetest"
	"github.com/dlgen/dlgen/generated/go/dlpack"
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
