//go:build cgo && unix

package devices

import (
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
)

// LoadCUDA loads a CUDA backend from the driver library at path, as the
// built-in one loads libcuda.so.1: the tests point it at the fake driver.
func LoadCUDA(path string) (StreamBackend, error) {
	b, err := loadCUDA(path)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// RestoreCUDA makes the built-in backend kDLCUDA's again.
func RestoreCUDA() {
	mu.Lock()
	backends[dlpack.DeviceTypeCUDA] = cuda
	mu.Unlock()
}

// DriverCopy copies n contiguous bytes with the driver's own synchronous
// cuMemcpyHtoD_v2 or cuMemcpyDtoH_v2, through a CUDA backend.
func DriverCopy(b Backend, dev dlpack.Device, toDevice bool, mem, host unsafe.Pointer, n int) error {
	return b.(*cudaBackend).driverCopy(dev, toDevice, mem, host, n)
}
