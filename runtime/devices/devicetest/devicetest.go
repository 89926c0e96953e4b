// Package devicetest is the suite every devices.Backend must pass. Register
// the backend (or rely on a built-in one) and call Run from a test:
//
//	func TestMyBackend(t *testing.T) {
//		devices.Register(myType, myBackend)
//		devicetest.Run(t, devicetest.Target{Type: myType, IDs: []int32{0}, Missing: []int32{-1, 1}})
//	}
//
// The suite goes through the package functions (devices.Allocate, Copy,
// Sync, Free), so it also proves the routing between the CPU and the
// device. It checks allocation (zeroed, 0 bytes, sizes no device holds),
// that device memory is separate from the host's, copies host to device,
// device to host, on one device and between devices (with two or more
// IDs) with strides of every kind (contiguous, gaps, negative, 0 in a
// source, extents 0 and 1, 0-d, transposes past a cache tile) and item
// sizes of 1 to 16 bytes, the order of copies submitted without Sync,
// errors for unknown device ids, and many goroutines at once (run it under
// -race).
package devicetest

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"sync"
	"testing"
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
	"github.com/dlgen/dlgen/runtime/devices"
	"github.com/dlgen/dlgen/runtime/devices/internal/layouttest"
)

// Target is what the suite proves: devices of one type.
type Target struct {
	Type dlpack.DeviceType // the device type whose backend is tested
	// IDs are the devices to test; with two or more, copies between them
	// are tested too.
	IDs []int32
	// Missing are device ids the backend must refuse (none for the CPU,
	// where every id is the host).
	Missing []int32
}

// Unavailable skips a test whose backend cannot run here, or fails it
// when DLGEN_REQUIRE_TOOLS=1 (as in CI, where a skip must never pass).
func Unavailable(t testing.TB, why error) {
	t.Helper()
	if os.Getenv("DLGEN_REQUIRE_TOOLS") == "1" {
		t.Fatalf("%v (DLGEN_REQUIRE_TOOLS=1; run `make deps`)", why)
	}
	t.Skipf("%v; run `make deps` to install it", why)
}

var host = dlpack.Device{DeviceType: dlpack.DeviceTypeCPU}

// Run runs the suite against target's backend, as registered.
func Run(t *testing.T, target Target) {
	if len(target.IDs) == 0 {
		t.Fatal("devicetest: no device ids to test")
	}
	if _, err := devices.For(target.Type); err != nil {
		Unavailable(t, err)
	}
	s := suite{target: target}
	t.Run("Allocate", s.allocate)
	t.Run("SeparateMemory", s.separateMemory)
	t.Run("Copies", s.copies)
	t.Run("Transposes", s.transposes)
	t.Run("Order", s.order)
	t.Run("Errors", s.errors)
	t.Run("Concurrent", s.concurrent)
}

type suite struct{ target Target }

func (s suite) dev(i int) dlpack.Device {
	return dlpack.Device{DeviceType: s.target.Type, DeviceID: s.target.IDs[i%len(s.target.IDs)]}
}

// buffer is device memory with a known byte content mirrored on the host.
type buffer struct {
	dev  dlpack.Device
	mem  unsafe.Pointer
	host []byte
}

func array(dev dlpack.Device, data unsafe.Pointer, size int, base int64, shape, strides []int64) devices.Array {
	return devices.Array{Device: dev, Data: data, ByteOffset: uint64(base) * uint64(size), Shape: shape, Strides: strides, ItemSize: size}
}

func hostData(b []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b)) }

// upload allocates len(content) bytes on dev and copies content there.
func upload(t testing.TB, dev dlpack.Device, content []byte) buffer {
	t.Helper()
	mem, err := devices.Allocate(dev, len(content))
	if err != nil {
		t.Fatalf("Allocate(%v, %d): %v", dev, len(content), err)
	}
	t.Cleanup(func() {
		if err := devices.Free(dev, mem); err != nil {
			t.Errorf("Free(%v): %v", dev, err)
		}
	})
	shape := []int64{int64(len(content))}
	if err := devices.Copy(array(dev, mem, 1, 0, shape, []int64{1}), array(host, hostData(content), 1, 0, shape, []int64{1})); err != nil {
		t.Fatalf("Copy to %v: %v", dev, err)
	}
	return buffer{dev, mem, append([]byte(nil), content...)}
}

// download syncs b's device and reads all of b's memory.
func download(t testing.TB, b buffer) []byte {
	t.Helper()
	syncDevice(t, b.dev)
	out := make([]byte, len(b.host))
	shape := []int64{int64(len(out))}
	if err := devices.Copy(array(host, hostData(out), 1, 0, shape, []int64{1}), array(b.dev, b.mem, 1, 0, shape, []int64{1})); err != nil {
		t.Fatalf("Copy from %v: %v", b.dev, err)
	}
	syncDevice(t, b.dev)
	return out
}

func syncDevice(t testing.TB, dev dlpack.Device) {
	t.Helper()
	if err := devices.Sync(dev); err != nil {
		t.Fatalf("Sync(%v): %v", dev, err)
	}
}

func random(r *rand.Rand, n int64) []byte {
	b := make([]byte, n)
	r.Read(b)
	return b
}

func (s suite) allocate(t *testing.T) {
	for i := range s.target.IDs {
		dev := s.dev(i)
		for _, n := range []int{1, 3, 4096, 1<<20 + 7} {
			mem, err := devices.Allocate(dev, n)
			if err != nil {
				t.Fatalf("Allocate(%v, %d): %v", dev, n, err)
			}
			b := buffer{dev, mem, make([]byte, n)}
			if got := download(t, b); !bytes.Equal(got, b.host) {
				t.Errorf("Allocate(%v, %d) is not zeroed", dev, n)
			}
			if err := devices.Free(dev, mem); err != nil {
				t.Errorf("Free(%v): %v", dev, err)
			}
		}
		if mem, err := devices.Allocate(dev, 0); err != nil || mem != nil {
			t.Errorf("Allocate(%v, 0) = %v, %v; want nil, nil", dev, mem, err)
		}
		if err := devices.Free(dev, nil); err != nil {
			t.Errorf("Free(%v, nil): %v", dev, err)
		}
		for _, n := range []int{-1, math.MaxInt, math.MaxInt/4 + 1} { // the last: 2^62 on 64-bit targets
			if mem, err := devices.Allocate(dev, n); err == nil {
				_ = devices.Free(dev, mem)
				t.Errorf("Allocate(%v, %d) succeeded", dev, n)
			}
		}
	}
}

// separateMemory: what was copied to the device stays there whatever the
// host does to its own memory afterwards, and the other way round.
func (s suite) separateMemory(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := range s.target.IDs {
		content := random(r, 1000)
		b := upload(t, s.dev(i), content)
		syncDevice(t, b.dev)
		r.Read(content)
		if got := download(t, b); !bytes.Equal(got, b.host) {
			t.Fatalf("%v: the device copy changed with the host memory", b.dev)
		}
		got := download(t, b)
		got[0]++
		if again := download(t, b); !bytes.Equal(again, b.host) {
			t.Fatalf("%v: the device memory changed with a host copy of it", b.dev)
		}
	}
}

// direction is one way a copy can go between host and device memory.
type direction struct {
	name            string
	dstDev, srcDev  func(s suite) (dlpack.Device, bool) // false: host memory
	needsTwoDevices bool
}

var directions = []direction{
	{name: "host to device", dstDev: device(0), srcDev: onHost},
	{name: "device to host", dstDev: onHost, srcDev: device(0)},
	{name: "on one device", dstDev: device(0), srcDev: device(0)},
	{name: "between devices", dstDev: device(1), srcDev: device(0), needsTwoDevices: true},
}

func device(i int) func(s suite) (dlpack.Device, bool) {
	return func(s suite) (dlpack.Device, bool) { return s.dev(i), true }
}

func onHost(suite) (dlpack.Device, bool) { return host, false }

// copyCase copies src's layout to dst's layout in the given direction and
// compares the destination's whole memory, gaps included, with the
// reference.
type copyCase struct {
	size         int
	shape        []int64
	ds, ss       []int64
	dbase, sbase int64
	dlen, slen   int64
}

func (c copyCase) String() string {
	return fmt.Sprintf("%d-byte items, shape %v, dst strides %v, src strides %v", c.size, c.shape, c.ds, c.ss)
}

func (s suite) run(t *testing.T, r *rand.Rand, d direction, c copyCase) {
	t.Helper()
	size := int64(c.size)
	srcBytes, dstBytes := random(r, c.slen*size), random(r, c.dlen*size)
	want := append([]byte(nil), dstBytes...)
	layouttest.Copy(want, c.dbase, c.ds, srcBytes, c.sbase, c.ss, c.shape, c.size)

	place := func(dev dlpack.Device, onDev bool, content []byte) (buffer, unsafe.Pointer) {
		if !onDev {
			return buffer{dev: host, host: content}, hostData(content)
		}
		b := upload(t, dev, content)
		return b, b.mem
	}
	dstDev, dstOn := d.dstDev(s)
	srcDev, srcOn := d.srcDev(s)
	dst, dstData := place(dstDev, dstOn, dstBytes)
	_, srcData := place(srcDev, srcOn, srcBytes)
	err := devices.Copy(array(dstDev, dstData, c.size, c.dbase, c.shape, c.ds), array(srcDev, srcData, c.size, c.sbase, c.shape, c.ss))
	if err != nil {
		t.Fatalf("%s, %v: %v", d.name, c, err)
	}
	for _, dev := range []dlpack.Device{dstDev, srcDev} {
		syncDevice(t, dev)
	}
	got := dstBytes
	if dstOn {
		got = download(t, dst)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s, %v: wrong copy", d.name, c)
	}
}

// randomCase makes a copy of a shape from makeShape between random
// layouts; half the destinations are contiguous.
func randomCase(r *rand.Rand, shape []int64) copyCase {
	c := copyCase{size: []int{1, 2, 3, 4, 8, 16}[r.Intn(6)], shape: shape}
	c.ss, c.sbase, c.slen = layouttest.Strides(r, shape, true)
	if r.Intn(2) == 0 {
		n := int64(1)
		for _, e := range shape {
			n *= e
		}
		c.ds, c.dbase, c.dlen = devices.ContiguousStrides(shape), 0, max(n, 1)
	} else {
		c.ds, c.dbase, c.dlen = layouttest.Strides(r, shape, false)
	}
	return c
}

func (s suite) directions(t *testing.T, f func(t *testing.T, d direction)) {
	for _, d := range directions {
		if d.needsTwoDevices && len(s.target.IDs) < 2 {
			continue
		}
		t.Run(d.name, func(t *testing.T) { f(t, d) })
	}
}

func (s suite) copies(t *testing.T) {
	s.directions(t, func(t *testing.T, d direction) {
		r := rand.New(rand.NewSource(2))
		for trial := 0; trial < 300; trial++ {
			s.run(t, r, d, randomCase(r, layouttest.Shape(r, r.Intn(5), 5)))
		}
		for trial := 0; trial < 20; trial++ {
			s.run(t, r, d, randomCase(r, layouttest.Tiled(r)))
		}
		// 0-d, an empty copy over nil data, a repeated source element.
		scalar := copyCase{size: 8, shape: []int64{}, ds: []int64{}, ss: []int64{}, dlen: 1, slen: 1}
		s.run(t, r, d, scalar)
		broadcast := copyCase{size: 4, shape: []int64{3, 5}, ds: []int64{5, 1}, ss: []int64{0, 0}, dlen: 15, slen: 1}
		s.run(t, r, d, broadcast)
		dstDev, _ := d.dstDev(s)
		srcDev, _ := d.srcDev(s)
		empty := array(dstDev, nil, 4, 0, []int64{0, 3}, []int64{3, 1})
		if err := devices.Copy(empty, array(srcDev, nil, 4, 0, []int64{0, 3}, []int64{-1, 0})); err != nil {
			t.Errorf("%s: an empty copy: %v", d.name, err)
		}
	})
}

func (s suite) transposes(t *testing.T) {
	s.directions(t, func(t *testing.T, d direction) {
		r := rand.New(rand.NewSource(3))
		for _, size := range []int{1, 2, 4, 8, 16} {
			rows, cols := int64(301), int64(257)
			c := copyCase{size: size, shape: []int64{rows, cols}, ds: []int64{cols, 1}, ss: []int64{1, rows}, dlen: rows * cols, slen: rows * cols}
			s.run(t, r, d, c)
			c.ds, c.dbase = []int64{-cols, -1}, rows*cols-1 // reversed too
			s.run(t, r, d, c)
			// A 3-d permutation, (2, 1, 0), of a row-major source.
			shape := []int64{67, 70, 37}
			n := shape[0] * shape[1] * shape[2]
			s.run(t, r, d, copyCase{size: size, shape: shape, ds: devices.ContiguousStrides(shape), ss: []int64{1, 67, 67 * 70}, dlen: n, slen: n})
		}
	})
}

// order: copies submitted without Sync in between take effect in
// submission order, on one device and between devices. The buffers are
// large, so that a copy that does not wait for the one before it is caught
// in the act.
func (s suite) order(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	const n = 2 << 20
	first, second := random(r, n), random(r, n)
	a, b, c := upload(t, s.dev(0), make([]byte, n)), upload(t, s.dev(1), make([]byte, n)), upload(t, s.dev(0), make([]byte, n))
	whole := func(dev dlpack.Device, data unsafe.Pointer) devices.Array {
		return array(dev, data, 4, 0, []int64{n / 4}, []int64{1})
	}
	reversed := func(dev dlpack.Device, data unsafe.Pointer) devices.Array {
		return array(dev, data, 4, n/4-1, []int64{n / 4}, []int64{-1})
	}
	steps := []struct{ dst, src devices.Array }{
		{whole(a.dev, a.mem), whole(host, hostData(first))},
		{whole(b.dev, b.mem), whole(a.dev, a.mem)},
		{whole(a.dev, a.mem), whole(host, hostData(second))},
		{whole(c.dev, c.mem), reversed(b.dev, b.mem)},
	}
	for _, step := range steps {
		if err := devices.Copy(step.dst, step.src); err != nil {
			t.Fatal(err)
		}
	}
	want := make([]byte, n)
	layouttest.Copy(want, 0, []int64{1}, first, n/4-1, []int64{-1}, []int64{n / 4}, 4)
	if got := download(t, c); !bytes.Equal(got, want) {
		t.Error("copies between devices ran out of order")
	}
	if got := download(t, a); !bytes.Equal(got, second) {
		t.Error("copies to one device ran out of order")
	}
}

func (s suite) errors(t *testing.T) {
	mem := upload(t, s.dev(0), make([]byte, 64))
	hostBuf := make([]byte, 64)
	shape, strides := []int64{16}, []int64{1}
	dev := s.dev(0)
	cases := []struct {
		what     string
		dst, src devices.Array
	}{
		{"different shapes", array(dev, mem.mem, 4, 0, []int64{4, 4}, []int64{4, 1}), array(host, hostData(hostBuf), 4, 0, []int64{2, 8}, []int64{8, 1})},
		{"different ranks", array(dev, mem.mem, 4, 0, shape, strides), array(host, hostData(hostBuf), 4, 0, []int64{4, 4}, []int64{4, 1})},
		{"different item sizes", array(dev, mem.mem, 4, 0, shape, strides), array(host, hostData(hostBuf), 2, 0, shape, strides)},
		{"strides of another rank", array(dev, mem.mem, 4, 0, shape, []int64{1, 1}), array(host, hostData(hostBuf), 4, 0, shape, strides)},
		{"a repeating destination", array(dev, mem.mem, 4, 0, shape, []int64{0}), array(host, hostData(hostBuf), 4, 0, shape, strides)},
		{"nil data", array(dev, nil, 4, 0, shape, strides), array(host, hostData(hostBuf), 4, 0, shape, strides)},
	}
	for _, id := range s.target.Missing {
		missing := dlpack.Device{DeviceType: s.target.Type, DeviceID: id}
		cases = append(cases,
			struct {
				what     string
				dst, src devices.Array
			}{fmt.Sprintf("device %d", id), array(missing, mem.mem, 4, 0, shape, strides), array(host, hostData(hostBuf), 4, 0, shape, strides)},
			struct {
				what     string
				dst, src devices.Array
			}{fmt.Sprintf("device %d as source", id), array(host, hostData(hostBuf), 4, 0, shape, strides), array(missing, mem.mem, 4, 0, shape, strides)},
		)
		if _, err := devices.Allocate(missing, 16); err == nil {
			t.Errorf("Allocate on %v succeeded", missing)
		}
		if err := devices.Sync(missing); err == nil {
			t.Errorf("Sync of %v succeeded", missing)
		}
	}
	for _, c := range cases {
		if err := devices.Copy(c.dst, c.src); err == nil {
			t.Errorf("a copy with %s succeeded", c.what)
		}
	}
	if got := download(t, mem); !bytes.Equal(got, mem.host) {
		t.Error("a refused copy changed the destination")
	}
	other := dlpack.DeviceTypeHexagon // a type no test registers
	if other == s.target.Type {
		other = dlpack.DeviceTypeWebGPU
	}
	err := devices.Copy(array(dlpack.Device{DeviceType: other}, hostData(hostBuf), 4, 0, shape, strides), array(dev, mem.mem, 4, 0, shape, strides))
	if !errors.Is(err, devices.ErrNoBackend) {
		t.Errorf("a copy to %v: %v, want ErrNoBackend", other, err)
	}
}

// concurrent: goroutines allocate, copy every way, sync and free at once,
// and all read one shared source.
func (s suite) concurrent(t *testing.T) {
	const workers = 16
	r := rand.New(rand.NewSource(5))
	shared := random(r, 3*1024)
	source := upload(t, s.dev(0), shared)
	syncDevice(t, source.dev)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- s.worker(w, source, shared)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func (s suite) worker(w int, source buffer, shared []byte) error {
	dev := s.dev(w)
	const n = 1024 // items of 3 bytes
	mem, err := devices.Allocate(dev, 3*n)
	if err != nil {
		return err
	}
	defer func() { _ = devices.Free(dev, mem) }()
	// Reversed from the shared source, then back to the host reversed again.
	err = devices.Copy(array(dev, mem, 3, n-1, []int64{n}, []int64{-1}), array(source.dev, source.mem, 3, 0, []int64{n}, []int64{1}))
	if err != nil {
		return err
	}
	if err := devices.Sync(dev); err != nil {
		return err
	}
	out := make([]byte, 3*n)
	if err := devices.Copy(array(host, hostData(out), 3, n-1, []int64{n}, []int64{-1}), array(dev, mem, 3, 0, []int64{n}, []int64{1})); err != nil {
		return err
	}
	if err := devices.Sync(dev); err != nil {
		return err
	}
	if !bytes.Equal(out, shared) {
		return fmt.Errorf("worker %d on %v: wrong data", w, dev)
	}
	return nil
}
