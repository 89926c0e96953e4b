// Package cruntime holds dlgen's hand-written C: the code of the C helper header
// (dlpack_helpers.h), the same for every release. The C backend
// (internal/backend/c) writes it into each release's header between the release's
// macros and its tables, keeping only the release's side of each
// #if DLGEN_HAS_... block; it is an ordinary file that editors, compilers
// and tests read as it is.
package cruntime

import _ "embed"

// Helpers is the hand-written part of dlpack_helpers.h.
//
//go:embed dlpack_helpers.h
var Helpers string
