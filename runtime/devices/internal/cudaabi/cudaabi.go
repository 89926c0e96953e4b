// Package cudaabi holds cuda.h, the CUDA driver API types and constants
// that the copy engine's CUDA backend (cgo includes it by path) and its
// fake driver (package fakecuda builds it beside its C source) share.
package cudaabi

import _ "embed"

// Header is cuda.h.
//
//go:embed cuda.h
var Header []byte
