package dltensor

import (
	"github.com/dlgen/dlgen/generated/go/dlpack"
	"github.com/dlgen/dlgen/runtime/devices"
)

// ExportOn is Export for a consumer that will use the tensor on stream
// consumer, as DLPack's __dlpack__(stream=consumer) asks, when the work
// that wrote the tensor was queued on stream producer: first the device's
// backend makes the consumer's stream wait for the producer's
// (devices.Handoff: for CUDA, an event recorded on one and waited for by
// the other, on the device, with no sync of the device or the host).
// Streams are integers as DLPack passes them (for CUDA a CUstream, 1 the
// legacy and 2 the per-thread default stream; 0 is refused; consumer -1
// asks for no synchronisation). On a device whose backend has no streams,
// or the CPU, it is Export. If the handoff fails, nothing is exported.
// opts are Export's (WithRelease).
func (t *Tensor) ExportOn(producer, consumer int64, opts ...Option) (*dlpack.ManagedTensorVersioned, error) {
	if t.closed.Load() {
		return nil, ErrClosed
	}
	if err := devices.Handoff(t.s.device, producer, consumer); err != nil {
		return nil, err
	}
	return t.Export(opts...)
}
