//go:build cgo && unix

package devices

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestOpenCLMissingLibraryIsNoBackend(t *testing.T) {
	_, err := loadOpenCL("libdlgen-no-such-opencl.so.1")
	assert.ErrorIs(t, err, ErrNoBackend)
	assert.ErrorContains(t, err, "devices: no backend for kDLOpenCL: OpenCL not available: libdlgen-no-such-opencl.so.1")
}

// TestOpenCLWaitsAreBounded gives a wait that never ends a short limit:
// the caller gets an error naming the call and the device, and what the
// wait holds is released once it does end.
func TestOpenCLWaitsAreBounded(t *testing.T) {
	defer func(limit time.Duration) { waitLimit = limit }(waitLimit)
	waitLimit = 20 * time.Millisecond
	q := &clQueue{dev: 1, name: "Portable Computing Language: basic"}
	stuck, released := make(chan struct{}), make(chan struct{})
	err := q.await("clFinish", func() error { <-stuck; return nil }, func() { close(released) })
	assert.EqualError(t, err, "devices: OpenCL device 1 (Portable Computing Language: basic): clFinish has not finished after 20ms; "+
		"the device is stuck or overloaded, and the memory of the copy stays in use until it finishes")
	select {
	case <-released:
		t.Fatal("released what the device still uses")
	default:
	}
	close(stuck)
	<-released

	waitLimit = time.Minute
	failed := errors.New("devices: OpenCL clFinish: CL_OUT_OF_RESOURCES (-5)")
	assert.Equal(t, failed, q.await("clFinish", func() error { return failed }, nil))
}
