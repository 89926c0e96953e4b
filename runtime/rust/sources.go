// Package rustruntime holds dlgen's hand-written Rust runtime: the crate's safe
// layer (import checks, owned tensors, exports of Rust memory) and its PyO3
// glue, the same for every release. The Rust backend (internal/backend/rust) ships
// these sources in the crate it generates, beside the declarations.
package rustruntime

import "embed"

// Sources are the hand-written sources, by file name.
//
//go:embed *.rs
var Sources embed.FS
