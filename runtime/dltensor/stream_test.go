//go:build cgo

package dltensor_test

import (
	"errors"
	"testing"
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
	"github.com/dlgen/dlgen/runtime/devices"
	"github.com/dlgen/dlgen/runtime/dltensor"
	"github.com/dlgen/dlgen/runtime/dltensor/internal/cproducer"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// streams is a backend for kDLExtDev with streams, whose memory is host
// memory: it records the handoffs it is asked for.
type streams struct {
	devices.CPU
	handoffs [][2]int64
	fail     error
}

func (s *streams) CopyOn(dst, src devices.Array, _ int64) error { return s.Copy(dst, src) }

func (s *streams) Handoff(_ dlpack.Device, producer, consumer int64) error {
	s.handoffs = append(s.handoffs, [2]int64{producer, consumer})
	return s.fail
}

// TestExportOnHandsTheProducersStreamToTheConsumers: the device's backend
// orders the two streams before the tensor is exported, and a handoff that
// fails exports nothing. (The CUDA backend's handoff, an event, is proven
// in package devices.)
func TestExportOnHandsTheProducersStreamToTheConsumers(t *testing.T) {
	b := &streams{}
	devices.Register(dlpack.DeviceTypeExtDev, b)
	defer devices.Register(dlpack.DeviceTypeExtDev, nil)
	buffer := unsafe.Pointer(&cproducer.New(goodSpec()).Buffer(16)[0]) // C memory, as FromC wants
	tensor, err := dltensor.FromC(buffer, dltensor.Layout{Device: dlpack.Device{DeviceType: dlpack.DeviceTypeExtDev}, DataType: f32, Shape: []int64{4}}, nil)
	require.NoError(t, err)
	defer tensor.Close()

	m, err := tensor.ExportOn(7, 9)
	require.NoError(t, err)
	dltensor.DeleteVersioned(m)
	assert.Equal(t, [][2]int64{{7, 9}}, b.handoffs)

	live := dltensor.LiveExports()
	b.fail = errors.New("devices: the event failed")
	_, err = tensor.ExportOn(7, 8)
	assert.Equal(t, b.fail, err)
	assert.Equal(t, live, dltensor.LiveExports(), "nothing exported")

	rocm, err := dltensor.FromC(buffer, dltensor.Layout{Device: dlpack.Device{DeviceType: dlpack.DeviceTypeROCM}, DataType: f32, Shape: []int64{4}}, nil)
	require.NoError(t, err)
	defer rocm.Close()
	_, err = rocm.ExportOn(1, 2)
	assert.ErrorIs(t, err, dltensor.ErrNoBackend, "streams of a device no backend serves cannot be ordered")
	for _, consumer := range []int64{1, -1} {
		m, err := rocm.ExportOn(1, consumer)
		require.NoError(t, err, "the same stream, or none, needs no ordering")
		dltensor.DeleteVersioned(m)
	}
	host, err := dltensor.FromSlice(make([]float32, 4))
	require.NoError(t, err)
	m, err = host.ExportOn(1, 2)
	require.NoError(t, err, "the CPU has nothing to order")
	dltensor.DeleteVersioned(m)
	host.Close()
	_, err = host.ExportOn(1, 2)
	assert.ErrorIs(t, err, dltensor.ErrClosed)
}
