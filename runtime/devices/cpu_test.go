package devices

import (
	"bytes"
	"fmt"
	"math"
	"math/rand"
	"testing"
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
	"github.com/dlgen/dlgen/runtime/devices/internal/layouttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// view is an Array over a byte buffer, with the element at index 0 at
// item base.
func view(buf []byte, size int, base int64, shape, strides []int64) Array {
	return Array{Device: dlpack.Device{DeviceType: dlpack.DeviceTypeCPU}, Data: unsafe.Pointer(unsafe.SliceData(buf)), ByteOffset: uint64(base) * uint64(size), Shape: shape, Strides: strides, ItemSize: size}
}

// testCopies copies random layouts of shapes from makeShape and compares
// every byte of the destination buffer with the reference.
func testCopies(t *testing.T, r *rand.Rand, trials int, makeShape func() []int64) {
	t.Helper()
	for trial := 0; trial < trials; trial++ {
		size := []int{1, 2, 3, 4, 8, 16}[r.Intn(6)]
		shape := makeShape()
		ss, sbase, slen := layouttest.Strides(r, shape, true)
		var ds []int64
		var dbase, dlen int64
		if r.Intn(2) == 0 {
			ds, dbase, dlen = ContiguousStrides(shape), 0, max(elements(shape), 1)
		} else {
			ds, dbase, dlen = layouttest.Strides(r, shape, false)
		}
		src := make([]byte, slen*int64(size))
		r.Read(src)
		got, want := make([]byte, dlen*int64(size)), make([]byte, dlen*int64(size))
		require.NoError(t, Copy(view(got, size, dbase, shape, ds), view(src, size, sbase, shape, ss)))
		layouttest.Copy(want, dbase, ds, src, sbase, ss, shape, size)
		if !bytes.Equal(want, got) {
			t.Fatalf("%d-byte items, shape %v, dst strides %v, src strides %v: wrong copy", size, shape, ds, ss)
		}
	}
}

func TestCopyMatchesReferenceForAnyStrides(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	t.Run("small", func(t *testing.T) {
		testCopies(t, r, 2000, func() []int64 { return layouttest.Shape(r, r.Intn(5), 5) })
	})
	// Shapes of odd and even sizes, so that tiles, their 4x4 blocks and the
	// edges all run.
	t.Run("tiled", func(t *testing.T) {
		testCopies(t, r, 100, func() []int64 { return layouttest.Tiled(r) })
	})
	// Small tiles, so that copies cross many tile edges.
	t.Run("many tiles", func(t *testing.T) {
		defer func(side int64) { tileSide = side }(tileSide)
		tileSide = 8
		testCopies(t, r, 100, func() []int64 { return layouttest.Tiled(r) })
	})
	t.Run("parallel", func(t *testing.T) {
		defer func(b, s int64, w func() int, side int64) {
			parallelBytes, streamBytes, maxWorkers, tileSide = b, s, w, side
		}(parallelBytes, streamBytes, maxWorkers, tileSide)
		parallelBytes, streamBytes, maxWorkers, tileSide = 64, 0, func() int { return 3 }, 8
		testCopies(t, r, 1000, func() []int64 { return layouttest.Shape(r, r.Intn(5), 12) })
		testCopies(t, r, 40, func() []int64 { return layouttest.Tiled(r) })
	})
}

// FuzzCopyMatchesReference copies random layouts of every kind, the
// tile side and the parallel split drawn too, from each seed
// (go test -fuzz FuzzCopyMatchesReference ./runtime/devices explores).
func FuzzCopyMatchesReference(f *testing.F) {
	for seed := int64(0); seed < 8; seed++ {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed int64) {
		defer func(b, s int64, w func() int, side int64) {
			parallelBytes, streamBytes, maxWorkers, tileSide = b, s, w, side
		}(parallelBytes, streamBytes, maxWorkers, tileSide)
		r := rand.New(rand.NewSource(seed))
		tileSide, streamBytes = []int64{8, 16, 40, 256}[r.Intn(4)], []int64{0, 1 << 62}[r.Intn(2)]
		parallelBytes, maxWorkers = []int64{64, 1 << 62}[r.Intn(2)], func() int { return 1 + r.Intn(4) }
		testCopies(t, r, 20, func() []int64 { return layouttest.Shape(r, r.Intn(5), 12) })
		testCopies(t, r, 4, func() []int64 { return layouttest.Tiled(r) })
	})
}

// TestStrips: the strip kernels of every item size (SSE2 assembly on
// amd64, Go under -tags purego) write each item where a
// transpose puts it, the gaps between the rows untouched.
func TestStrips(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	for _, size := range []int64{1, 2, 4, 8, 16} {
		block, _, _ := stripShape(size)
		for _, rows := range []int64{block, 3 * block, 4 * block} {
			for _, n := range []int64{0, 1, 3, 17} {
				cols := 16 / size * n
				srcCol, dstRow := size*(rows+r.Int63n(5)), 16*n+size*r.Int63n(3) // gaps on both sides
				src := make([]byte, max(cols*srcCol, 1))
				r.Read(src)
				got, want := make([]byte, rows*dstRow), make([]byte, rows*dstRow)
				r.Read(got)
				copy(want, got)
				if n > 0 {
					transposeStrip(unsafe.Pointer(&got[0]), unsafe.Pointer(&src[0]), dstRow, srcCol, n, rows, size)
				}
				for q := int64(0); q < rows; q++ {
					for c := int64(0); c < cols; c++ {
						copy(want[q*dstRow+c*size:][:size], src[q*size+c*srcCol:])
					}
				}
				require.Equal(t, want, got, "%d-byte items, %d rows, %d steps", size, rows, n)
			}
		}
	}
}

// TestBlocks: the block kernels of large transposes (bytes, 4-byte items)
// write each item of n blocks where a transpose puts it, from source
// columns at any address and stride, either way, the gaps between the destination rows
// untouched.
func TestBlocks(t *testing.T) {
	r := rand.New(rand.NewSource(6))
	for _, size := range []int64{1, 4} {
		for _, n := range []int64{0, 1, 3, 5} {
			for _, at := range []int64{0, 1, 7, 15} {
				srcCol, dstRow := 64*size+at+r.Int63n(200), 64*size*n+16*r.Int63n(3) // gaps on both sides
				src := make([]byte, at+max(64*n*srcCol, 1))
				r.Read(src)
				if at%2 == 1 && n > 0 { // columns walked backwards from the last
					at, srcCol = at+(64*n-1)*srcCol, -srcCol
				}
				got, want := aligned(64*dstRow+16), make([]byte, 64*dstRow+16)
				r.Read(got)
				copy(want, got)
				if n > 0 {
					transposeBlocks(unsafe.Pointer(&got[0]), unsafe.Pointer(&src[at]), dstRow, srcCol, n, size)
					storeFence()
				}
				for q := int64(0); q < 64; q++ {
					for c := int64(0); c < 64*n; c++ {
						copy(want[q*dstRow+c*size:][:size], src[at+q*size+c*srcCol:])
					}
				}
				require.Equal(t, want, got, "%d-byte items, %d blocks, source at %d, %d apart, rows %d apart", size, n, at, srcCol, dstRow)
			}
		}
	}
}

// aligned returns n bytes at an address that is a multiple of 16.
func aligned(n int64) []byte {
	buf := make([]byte, n+15)
	at := -int64(uintptr(unsafe.Pointer(&buf[0]))) & 15
	return buf[at : at+n]
}

func TestTransposes(t *testing.T) {
	defer func(b, side, stream int64) { parallelBytes, tileSide, streamBytes = b, side, stream }(parallelBytes, tileSide, streamBytes)
	// With streamBytes 0, tiles of 32 (128 for bytes) run the byte blocks
	// of 64 and their edges where the rows are a multiple of 16 bytes
	// apart, tiles of 64 those of 4-byte items too.
	for _, ps := range [][3]int64{{1 << 62, 1 << 62, 32}, {256, 1 << 62, 32}, {1 << 62, 0, 32}, {256, 0, 32}, {1 << 62, 0, 64}, {256, 0, 64}} {
		parallelBytes, streamBytes, tileSide = ps[0], ps[1], ps[2]
		for _, size := range []int{1, 2, 3, 4, 8, 16} {
			for _, dims := range [][2]int64{{1, 1}, {3, 70}, {33, 65}, {64, 64}, {100, 7}, {257, 131}, {200, 144}, {64, 320}} {
				rows, cols := dims[0], dims[1]
				src := make([]byte, rows*cols*int64(size))
				for i := range src {
					src[i] = byte(i * 7 / 3)
				}
				// src is cols x rows row-major, read transposed, into
				// a destination at a multiple of 16 bytes, then one item on.
				for _, at := range []int64{0, 1} {
					got := aligned(int64(len(src)) + at*int64(size))
					require.NoError(t, Copy(view(got, size, at, []int64{rows, cols}, []int64{cols, 1}), view(src, size, 0, []int64{rows, cols}, []int64{1, rows})))
					want := make([]byte, len(got))
					copy(want, got)
					layouttest.Copy(want, at, []int64{cols, 1}, src, 0, []int64{1, rows}, []int64{rows, cols}, size)
					require.Equal(t, want, got, "%d x %d of %d bytes at %d, parallel from %d, streamed from %d, tiles of %d", rows, cols, size, at, ps[0], ps[1], ps[2])
				}
			}
		}
	}
}

func TestCopyRejectsMismatchedShapes(t *testing.T) {
	buf := make([]byte, 32)
	err := Copy(view(buf, 4, 0, []int64{2, 4}, []int64{4, 1}), view(buf, 4, 0, []int64{4, 2}, []int64{2, 1}))
	assert.ErrorContains(t, err, "shapes")
	err = CPU{}.Copy(view(buf, 4, 0, []int64{2, 4}, []int64{4, 1}), view(buf, 4, 0, []int64{4, 2}, []int64{2, 1}))
	assert.ErrorContains(t, err, "shapes", "the CPU backend checks too")
}

func TestUnknownDeviceHasNoBackend(t *testing.T) {
	_, err := For(dlpack.DeviceTypeROCM)
	assert.EqualError(t, err, "devices: no backend for kDLROCM")
	assert.ErrorIs(t, err, ErrNoBackend)
	b, err := For(dlpack.DeviceTypeCPU)
	require.NoError(t, err)
	p, err := b.Allocate(dlpack.Device{DeviceType: dlpack.DeviceTypeCPU}, 16)
	require.NoError(t, err)
	assert.Equal(t, make([]byte, 16), unsafe.Slice((*byte)(p), 16))
}

// hostAlias is a backend for a device type whose memory the CPU reads
// directly: it reuses the CPU engine and counts its copies.
type hostAlias struct {
	CPU
	copies *int
}

func (h hostAlias) Copy(dst, src Array) error { *h.copies++; return h.CPU.Copy(dst, src) }

func TestRegisterInstallsABackend(t *testing.T) {
	copies := 0
	Register(dlpack.DeviceTypeExtDev, hostAlias{copies: &copies})
	defer func() {
		mu.Lock()
		delete(backends, dlpack.DeviceTypeExtDev)
		mu.Unlock()
	}()
	src, dst := []byte{1, 2, 3, 4, 5, 6}, make([]byte, 6)
	from, to := view(src, 2, 0, []int64{3}, []int64{1}), view(dst, 2, 0, []int64{3}, []int64{1})
	from.Device.DeviceType, to.Device.DeviceType = dlpack.DeviceTypeExtDev, dlpack.DeviceTypeExtDev
	require.NoError(t, Copy(to, from))
	assert.Equal(t, src, dst)
	assert.Equal(t, 1, copies)
}

// TestHostReadableMemoryIsCopiedByTheCPU: memory the schema marks host
// readable is host memory to Copy and Sync without a backend of its own,
// and a device's backend sees it as kDLCPU; Allocate still has no backend.
func TestHostReadableMemoryIsCopiedByTheCPU(t *testing.T) {
	var seen []dlpack.Device
	Register(dlpack.DeviceTypeExtDev, recorder{seen: &seen})
	defer Register(dlpack.DeviceTypeExtDev, nil)
	host := []dlpack.DeviceType{dlpack.DeviceTypeCUDAHost, dlpack.DeviceTypeROCMHost, dlpack.DeviceTypeCUDAManaged}
	for _, typ := range host {
		on := func(a Array, other dlpack.DeviceType) Array {
			a.Device = dlpack.Device{DeviceType: other, DeviceID: 2}
			return a
		}
		src, dst := []byte{0, 1, 2, 3, 4, 5}, make([]byte, 6)
		transposed := view(src, 1, 0, []int64{3, 2}, []int64{1, 3})
		rowMajor := view(dst, 1, 0, []int64{3, 2}, []int64{2, 1})
		require.NoError(t, Copy(rowMajor, on(transposed, typ)), "%v to kDLCPU", typ)
		assert.Equal(t, []byte{0, 3, 1, 4, 2, 5}, dst)
		clear(dst)
		require.NoError(t, Copy(on(rowMajor, host[0]), on(transposed, typ)), "%v to %v", typ, host[0])
		assert.Equal(t, []byte{0, 3, 1, 4, 2, 5}, dst)
		assert.NoError(t, Sync(dlpack.Device{DeviceType: typ}))
		require.NoError(t, Copy(on(rowMajor, dlpack.DeviceTypeExtDev), on(transposed, typ)))
		_, err := Allocate(dlpack.Device{DeviceType: typ}, 8)
		assert.EqualError(t, err, "devices: no backend for "+typ.String())
	}
	assert.Equal(t, []dlpack.Device{{DeviceType: dlpack.DeviceTypeCPU}, {DeviceType: dlpack.DeviceTypeCPU}, {DeviceType: dlpack.DeviceTypeCPU}}, seen,
		"the ExtDev backend saw each host side as the CPU")
	buf := make([]byte, 4)
	from, to := view(buf, 4, 0, []int64{1}, []int64{1}), view(buf, 4, 0, []int64{1}, []int64{1})
	from.Device.DeviceType, to.Device.DeviceType = dlpack.DeviceTypeROCMHost, dlpack.DeviceTypeROCM
	assert.EqualError(t, Copy(to, from), "devices: no backend for kDLROCM", "a device without a backend is not reached through host memory")
}

// recorder is a device backend that records the source device of its copies.
type recorder struct {
	CPU
	seen *[]dlpack.Device
}

func (r recorder) Copy(dst, src Array) error {
	*r.seen = append(*r.seen, src.Device)
	return nil
}

func elements(shape []int64) int64 {
	n, _ := Elements(shape)
	return n
}

func TestElementsReportsOverflow(t *testing.T) {
	for _, shape := range [][]int64{{1 << 32, 1 << 32}, {3, 6148914691236517206}, {1 << 62, 2}} {
		_, ok := Elements(shape)
		assert.False(t, ok, "%v", shape)
	}
	n, ok := Elements([]int64{1 << 40, 1 << 40, 0})
	assert.True(t, ok)
	assert.Zero(t, n)
	n, ok = Elements([]int64{1 << 31, 1 << 31})
	assert.True(t, ok)
	assert.Equal(t, int64(1<<62), n)
}

func TestCPUAllocateRefusesImpossibleSizes(t *testing.T) {
	sizes := []int{-1}
	if big := uint64(MaxAllocation) + 1; uint64(math.MaxInt) >= big {
		sizes = append(sizes, int(big), math.MaxInt)
	}
	for _, n := range sizes {
		_, err := CPU{}.Allocate(dlpack.Device{DeviceType: dlpack.DeviceTypeCPU}, n)
		assert.EqualError(t, err, fmt.Sprintf("devices: cannot allocate %d bytes", n))
	}
}
