// Dlgen turns the versioned DLPack schema into bindings: a C header that
// replaces upstream dlpack.h, a pure-Go package with the same layout, and
// Python modules (ctypes, standard library only; Cython, fast) that
// implement the DLPack protocol.
//
// Usage:
//
//	dlgen [-lang c,go,python] [-out DIR] [-schema FILE] [-dlpack-version X.Y] [-check | -diff X.Y]
//
// Flags:
//
//	-lang            comma-separated languages; default: all (c, go, python).
//	-out DIR         output directory; default ".". The C header goes to
//	                 DIR/c/dlpack/dlpack.h, the Go package to DIR/go/dlpack/,
//	                 the Python modules to DIR/python/ (build the Cython one
//	                 there with `cythonize -i dlpack_cython.pyx`).
//	-schema FILE     schema to read; default: the embedded schema/dlpack.yaml.
//	-dlpack-version  the DLPack release to emit, e.g. 0.6 or 1.3; default: the
//	                 newest. An unknown release is an error that lists the known.
//	-check           write nothing; print a unified diff of what would change and
//	                 exit 1 if anything under -out is stale or missing.
//	-diff X.Y        write nothing; list what changed from release X.Y to
//	                 -dlpack-version, one finding per line as
//	                 "CATEGORY RULE: message" (ABI, API or INFO; rules such as
//	                 STRUCT_SIZE_SAME, FIELD_OFFSET_SAME, ENUM_VALUE_SAME,
//	                 ENUM_VALUE_NO_DELETE), and exit 1 if any ABI or API
//	                 finding breaks code written for X.Y.
//
// Only files whose content changes are written, and the output is
// byte-identical across runs and machines, so generated files can be checked
// in and verified in CI with -check.
//
// Exit status: 0 on success (and a current -out with -check), 1 when -check
// finds drift or -diff a breaking change, 2 on a usage error or an invalid
// schema. Schema errors are
// reported one per line as file:line:col: message.
//
// To vendor a header for DLPack 1.3 and keep it current:
//
//	dlgen -lang c -dlpack-version 1.3 -out third_party/
//	dlgen -lang c -dlpack-version 1.3 -out third_party/ -check   # in CI
//
// In a Go project that has dlgen as a module dependency:
//
//	//go:generate go run github.com/dlgen/dlgen/cmd/dlgen -lang go -out internal
package main
