//go:build tvmffi

package exchange

import (
	"sync"
	"testing"
	"unsafe"

	"github.com/dlgen/dlgen/runtime/dltensor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGoTensorThroughTVMFFIAndBack hands a Go tensor to tvm-ffi, takes it
// back through tvm-ffi's own export, and checks that no copy was made and
// that every deleter ran exactly once.
func TestGoTensorThroughTVMFFIAndBack(t *testing.T) {
	invalid := dltensor.InvalidDeletes()
	data := []float32{0, 1, 2, 3, 4, 5}
	tensor, err := dltensor.FromSlice(data, 2, 3)
	require.NoError(t, err)
	m, err := tensor.Export()
	require.NoError(t, err)
	obj, err := FromDLPack(m)
	require.NoError(t, err)

	dl := obj.Tensor()
	require.Equal(t, unsafe.Pointer(&data[0]), dl.Data, "tvm-ffi holds Go's memory, not a copy")
	assert.Equal(t, []int64{2, 3}, unsafe.Slice(dl.Shape, 2))
	unsafe.Slice((*float32)(dl.Data), 6)[4] = 40 // written through tvm-ffi's tensor
	assert.Equal(t, float32(40), data[4])

	back, err := obj.ToDLPack()
	require.NoError(t, err)
	require.NoError(t, obj.Release())
	proxied := ProxiedDeletes()
	again, err := dltensor.Import(Counted(back))
	require.NoError(t, err)
	p, err := again.Data()
	require.NoError(t, err)
	assert.Equal(t, unsafe.Pointer(&data[0]), p, "the round trip is zero-copy")
	v, err := dltensor.View[float32](again)
	require.NoError(t, err)
	v[5] = 50
	assert.Equal(t, float32(50), data[5])

	tensor.Close()
	assert.EqualValues(t, 1, dltensor.LiveExports(), "tvm-ffi's tensor still holds Go's export")
	again.Close() // tvm-ffi's deleter, then ours
	assert.Equal(t, proxied+1, ProxiedDeletes(), "tvm-ffi's deleter ran exactly once")
	assert.Zero(t, dltensor.LiveExports())
	assert.Equal(t, invalid, dltensor.InvalidDeletes(), "no deleter ran twice")
}

// TestTVMFFITensorIntoGo imports a tensor tvm-ffi made (its own view of a
// C producer's matrix) and hands it back.
func TestTVMFFITensorIntoGo(t *testing.T) {
	deleted := CDeleted()
	src := CMatrix(3, 4)
	cdata := src.DLTensor.Data
	obj, err := FromDLPack(src)
	require.NoError(t, err)
	row, err := obj.RowView(1)
	require.NoError(t, err)
	require.NoError(t, obj.Release())
	m, err := row.ToDLPack()
	require.NoError(t, err)
	require.NoError(t, row.Release())

	proxied := ProxiedDeletes()
	tensor, err := dltensor.Import(Counted(m))
	require.NoError(t, err)
	assert.Equal(t, []int64{4}, tensor.Shape())
	assert.Equal(t, uint64(16), tensor.ByteOffset())
	p, err := tensor.Data()
	require.NoError(t, err)
	assert.Equal(t, cdata, p, "Go sees the C producer's memory")
	v, err := dltensor.View[float32](tensor)
	require.NoError(t, err)
	assert.Equal(t, []float32{4, 5, 6, 7}, v)
	v[0] = -4
	assert.Equal(t, float32(-4), unsafe.Slice((*float32)(cdata), 12)[4], "Go's write is seen in C")

	// Handed back to tvm-ffi, after Go's handle is gone.
	out, err := tensor.Export()
	require.NoError(t, err)
	tensor.Close()
	assert.Equal(t, deleted, CDeleted(), "Go's export keeps tvm-ffi's tensor")
	obj2, err := FromDLPack(out)
	require.NoError(t, err)
	assert.Equal(t, float32(-4), *(*float32)(unsafe.Add(obj2.Tensor().Data, obj2.Tensor().ByteOffset)))
	require.NoError(t, obj2.Release())
	assert.Equal(t, deleted+1, CDeleted(), "the C producer's deleter ran exactly once")
	assert.Equal(t, proxied+1, ProxiedDeletes(), "tvm-ffi's deleter ran exactly once")
	assert.Zero(t, dltensor.LiveExports())
}

// TestLegacyPairWithTVMFFI goes through TVMFFITensorFromDLPack and
// TVMFFITensorToDLPack.
func TestLegacyPairWithTVMFFI(t *testing.T) {
	data := []int32{7, 8, 9}
	tensor, err := dltensor.FromSlice(data)
	require.NoError(t, err)
	m, err := tensor.ExportLegacy()
	require.NoError(t, err)
	tensor.Close()
	obj, err := FromDLPackLegacy(m)
	require.NoError(t, err)
	back, err := obj.ToDLPackLegacy()
	require.NoError(t, err)
	require.NoError(t, obj.Release())
	imp, err := dltensor.ImportLegacy(back)
	require.NoError(t, err)
	v, err := dltensor.View[int32](imp)
	require.NoError(t, err, "legacy imports are writable by default")
	assert.Equal(t, unsafe.Pointer(&data[0]), unsafe.Pointer(&v[0]))
	imp.Close()
	assert.Zero(t, dltensor.LiveExports())
}

// TestConcurrentExchangeWithTVMFFI runs exchanges from many goroutines,
// releasing tvm-ffi's objects on other threads: run under -race.
func TestConcurrentExchangeWithTVMFFI(t *testing.T) {
	shared, err := dltensor.FromSlice(make([]float64, 64), 8, 8)
	require.NoError(t, err)
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				m, err := shared.Export()
				if !assert.NoError(t, err) {
					return
				}
				obj, err := FromDLPack(m)
				if !assert.NoError(t, err) {
					return
				}
				back, err := obj.ToDLPack()
				assert.NoError(t, err)
				done := make(chan struct{})
				go func() { assert.NoError(t, obj.Release()); close(done) }()
				imp, err := dltensor.Import(back)
				if assert.NoError(t, err) {
					imp.Close()
				}
				<-done
			}
		}()
	}
	wg.Wait()
	shared.Close()
	assert.Zero(t, dltensor.LiveExports())
}
