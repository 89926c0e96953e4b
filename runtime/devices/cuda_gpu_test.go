//go:build cgo && unix

package devices_test

// The CUDA backend on the real driver (libcuda.so.1) and a real GPU:
// scripts/gpu-check.sh runs these on a machine that has one. Without a
// driver or a device they skip, and tests/expected-skips.txt lists them:
// a skip is never a pass. DLGEN_REQUIRE_GPU=1 (set by the script) turns
// the skip into a failure.

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
	"github.com/dlgen/dlgen/runtime/devices"
	"github.com/dlgen/dlgen/runtime/devices/devicetest"
	"github.com/dlgen/dlgen/runtime/devices/internal/layouttest"
	"github.com/stretchr/testify/require"
)

// realCUDA returns the names of the real driver's devices, or skips.
func realCUDA(t *testing.T) []string {
	t.Helper()
	names, err := devices.CUDADevices()
	if err != nil {
		if os.Getenv("DLGEN_REQUIRE_GPU") == "1" {
			t.Fatalf("%v (DLGEN_REQUIRE_GPU=1)", err)
		}
		t.Skipf("no CUDA GPU here: %v", err)
	}
	if strings.HasPrefix(names[0], "dlgen fake") {
		t.Fatalf("%q: this is dlgen's fake driver (found through LD_LIBRARY_PATH?), not a GPU", names)
	}
	t.Logf("the real CUDA driver and GPU: %q", names)
	return names
}

func TestCUDAOnTheRealDriverPassesTheSuite(t *testing.T) {
	names := realCUDA(t)
	ids := make([]int32, len(names))
	for i := range ids {
		ids[i] = int32(i)
	}
	devicetest.Run(t, devicetest.Target{Type: dlpack.DeviceTypeCUDA, IDs: ids, Missing: []int32{-1, int32(len(names))}})
}

// filled returns n bytes of a fixed pseudo-random pattern.
func filled(n int) []byte {
	b := make([]byte, n)
	x := uint64(0x9E3779B97F4A7C15)
	for i := 0; i+8 <= n; i += 8 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		*(*uint64)(unsafe.Pointer(&b[i])) = x
	}
	return b
}

func flat(dev dlpack.Device, data unsafe.Pointer, n int) devices.Array {
	return devices.Array{Device: dev, Data: data, Shape: []int64{int64(n)}, Strides: []int64{1}, ItemSize: 1}
}

func TestCUDAOnTheRealDriverRoundTrips1GiB(t *testing.T) {
	realCUDA(t)
	const n = 1 << 30
	in, out := filled(n), make([]byte, n)
	mem, err := devices.Allocate(cuda0, n)
	require.NoError(t, err)
	defer func() { require.NoError(t, devices.Free(cuda0, mem)) }()
	start := time.Now()
	require.NoError(t, devices.Copy(flat(cuda0, mem, n), flat(cpu, unsafe.Pointer(&in[0]), n)))
	require.NoError(t, devices.Copy(flat(cpu, unsafe.Pointer(&out[0]), n), flat(cuda0, mem, n)))
	require.NoError(t, devices.Sync(cuda0))
	took := time.Since(start)
	if !bytes.Equal(in, out) {
		t.Fatal("1 GiB host to device to host: the bytes that came back differ")
	}
	t.Logf("1 GiB host to device to host: byte-exact, %v", took)
}

// TestCUDAOnTheRealDriverCopiesStridedLayouts copies large layouts of each
// kind the backend serves (2-D, 3-D, staged transposes and reversals, on
// one device) and compares every byte, gaps included, with the reference.
func TestCUDAOnTheRealDriverCopiesStridedLayouts(t *testing.T) {
	realCUDA(t)
	cases := []struct {
		name         string
		shape        []int64
		ds, ss       []int64 // strides in 4-byte items
		dbase, sbase int64
	}{
		{"2-D: 1024 rows of 1000 of every 1024 to packed", []int64{1024, 1000}, []int64{1000, 1}, []int64{1024, 1}, 0, 0},
		{"3-D: 16 slices of 256x250 in 300x256 slices", []int64{16, 256, 250}, []int64{64000, 250, 1}, []int64{300 * 256, 256, 1}, 0, 0},
		{"a 2048x2048 transpose (staged)", []int64{2048, 2048}, []int64{2048, 1}, []int64{1, 2048}, 0, 0},
		{"rows reversed", []int64{512, 512}, []int64{512, 1}, []int64{-512, 1}, 0, 511 * 512},
	}
	lengths := func(shape, strides []int64, base int64) int64 {
		hi := base
		for k, n := range shape {
			if strides[k] > 0 {
				hi += (n - 1) * strides[k]
			}
		}
		return hi + 1
	}
	for _, c := range cases {
		for _, dir := range []string{"host to device", "device to host", "on one device"} {
			dlen, slen := lengths(c.shape, c.ds, c.dbase), lengths(c.shape, c.ss, c.sbase)
			src, dst := filled(int(slen*4)), filled(int(dlen*4))
			slices.Reverse(dst)
			want := slices.Clone(dst)
			layouttest.Copy(want, c.dbase, c.ds, src, c.sbase, c.ss, c.shape, 4)
			place := func(b []byte, onDevice bool) (dlpack.Device, unsafe.Pointer) {
				if !onDevice {
					return cpu, unsafe.Pointer(&b[0])
				}
				mem, err := devices.Allocate(cuda0, len(b))
				require.NoError(t, err)
				t.Cleanup(func() { require.NoError(t, devices.Free(cuda0, mem)) })
				require.NoError(t, devices.Copy(flat(cuda0, mem, len(b)), flat(cpu, unsafe.Pointer(&b[0]), len(b))))
				return cuda0, mem
			}
			dstDev, dstMem := place(dst, dir != "device to host")
			srcDev, srcMem := place(src, dir != "host to device")
			err := devices.Copy(
				devices.Array{Device: dstDev, Data: dstMem, ByteOffset: uint64(c.dbase * 4), Shape: c.shape, Strides: c.ds, ItemSize: 4},
				devices.Array{Device: srcDev, Data: srcMem, ByteOffset: uint64(c.sbase * 4), Shape: c.shape, Strides: c.ss, ItemSize: 4})
			require.NoError(t, err, "%s, %s", c.name, dir)
			require.NoError(t, devices.Sync(cuda0))
			got := dst
			if dstDev == cuda0 {
				got = make([]byte, len(dst))
				require.NoError(t, devices.Copy(flat(cpu, unsafe.Pointer(&got[0]), len(got)), flat(cuda0, dstMem, len(got))))
				require.NoError(t, devices.Sync(cuda0))
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s, %s: wrong bytes", c.name, dir)
			}
			t.Logf("strided copy byte-exact: %s, %s", c.name, dir)
		}
	}
}

// TestCUDAOnTheRealDriverMeasuresBandwidth times the backend's contiguous
// copies (Copy, then Sync) against the driver's own synchronous
// cuMemcpyHtoD_v2 and cuMemcpyDtoH_v2 on the same 256 MiB, alternating
// them, and logs the medians and their ratio (goal: 0.9x or more). It
// asserts nothing about time: scripts/gpu-check.sh prints the ratio.
func TestCUDAOnTheRealDriverMeasuresBandwidth(t *testing.T) {
	realCUDA(t)
	b, err := devices.For(dlpack.DeviceTypeCUDA)
	require.NoError(t, err)
	const n, rounds = 256 << 20, 9
	host := filled(n)
	h := unsafe.Pointer(&host[0])
	mem, err := devices.Allocate(cuda0, n)
	require.NoError(t, err)
	defer func() { require.NoError(t, devices.Free(cuda0, mem)) }()
	timed := func(f func() error) time.Duration {
		start := time.Now()
		require.NoError(t, f())
		return time.Since(start)
	}
	for _, dir := range []struct {
		name, call string
		toDevice   bool
		copy       func() error
	}{
		{"host to device", "cuMemcpyHtoD_v2", true, func() error { return devices.Copy(flat(cuda0, mem, n), flat(cpu, h, n)) }},
		{"device to host", "cuMemcpyDtoH_v2", false, func() error { return devices.Copy(flat(cpu, h, n), flat(cuda0, mem, n)) }},
	} {
		var ours, driver []time.Duration
		for range rounds {
			ours = append(ours, timed(func() error {
				if err := dir.copy(); err != nil {
					return err
				}
				return devices.Sync(cuda0)
			}))
			driver = append(driver, timed(func() error { return devices.DriverCopy(b, cuda0, dir.toDevice, mem, h, n) }))
		}
		slices.Sort(ours)
		slices.Sort(driver)
		mid := rounds / 2
		ratio := float64(driver[mid]) / float64(ours[mid])
		lo, hi := float64(driver[mid-2])/float64(ours[mid+2]), float64(driver[mid+2])/float64(ours[mid-2])
		t.Logf("bandwidth %s, 256 MiB: backend %v (%.1f GB/s) vs the driver's %s %v: %.2fx (middle %.2fx to %.2fx; goal >= 0.9x; %d rounds)",
			dir.name, ours[mid].Round(time.Microsecond), float64(n)/ours[mid].Seconds()/1e9, dir.call, driver[mid].Round(time.Microsecond),
			ratio, lo, hi, rounds)
		fmt.Fprintf(os.Stderr, "gpu-check ratio %s %.2f\n", dir.name, ratio)
	}
}
