//go:build !(cgo && unix)

package devices

const withoutCgo = "dlgen was built without cgo"

func openCL() (Backend, error) { return nil, notAvailable(withoutCgo) }

// OpenCLDevices names the OpenCL devices in the order of their device ids;
// in a build without cgo, OpenCL is not available.
func OpenCLDevices() ([]string, error) { return nil, notAvailable(withoutCgo) }
