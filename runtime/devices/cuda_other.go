//go:build !(cgo && unix)

package devices

func cuda() (Backend, error) { return nil, cudaNotAvailable(withoutCgo) }

// CUDADevices names the CUDA devices in the order of their device ids; in
// a build without cgo, CUDA is not available.
func CUDADevices() ([]string, error) { return nil, cudaNotAvailable(withoutCgo) }
