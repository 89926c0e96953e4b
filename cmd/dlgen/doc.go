// Dlgen turns the versioned DLPack schema into bindings: a C header that
// replaces upstream dlpack.h, a pure-Go package with the same layout,
// Python modules (ctypes, standard library only; Cython, fast) that
// implement the DLPack protocol, and a no_std Rust crate with a safe layer;
// on request (-lang conformance), a conformance kit that tests any array
// library's __dlpack__ and from_dlpack from inside the capsule.
//
// Usage:
//
//	dlgen [-lang c,go,python,rust] -out DIR [-schema FILE] [-dlpack-version X.Y] [-python-package NAME] [-check]
//	dlgen [-schema FILE] [-dlpack-version X.Y] -diff X.Y
//	dlgen [-schema FILE] [-schema-yaml] -identify FILE.h
//	dlgen -diff-rules
//	dlgen -version
//	dlgen -h                 (this manual; also go doc ./cmd/dlgen in a checkout)
//
// Flags:
//
//	-lang            comma-separated languages; default: all (c, go, python,
//	                 rust). conformance, never a default, writes the DLPack
//	                 conformance kit of the release (DLPack 1.0 and later) to
//	                 DIR/conformance/, a Python project (`pip install
//	                 DIR/conformance`; docs/conformance-kit.md). An unknown
//	                 language is an error, whatever the other flags.
//	-out DIR         output directory, required to generate or -check (-out .
//	                 for the current one); without it dlgen writes nothing
//	                 and exits 2. The C header goes to
//	                 DIR/c/dlpack/dlpack.h, the Go package to DIR/go/dlpack/,
//	                 the Python modules to DIR/python/ (build the Cython one
//	                 there with `cythonize -i dlpack_cython.pyx`), the Rust
//	                 crate to DIR/rust/dlpack/. DIR is resolved once (a
//	                 link in its own path is yours to choose); below it, dlgen
//	                 reads, writes and removes only inside DIR: a symbolic
//	                 link there that leads out of DIR (a file, a language's
//	                 directory) is an error that names it, exit 2, found
//	                 before anything is written; a link that stays inside is
//	                 followed. -check reads by the same rule.
//	-schema FILE     schema to read; default: the embedded schema/dlpack.yaml.
//	-dlpack-version  the DLPack release to emit, spelled as upstream tags it (0.6,
//	                 1.3; never 1.03), or main: upstream's unreleased main branch,
//	                 never the default; default: the newest release. An unknown
//	                 release is an error that lists the known.
//	-python-package NAME
//	                 write the Python modules as the package NAME inside a
//	                 package that vendors them: NAME is the dotted name of
//	                 DIR/python (-out yourpkg/_vendor -python-package
//	                 yourpkg._vendor.python). They cimport their own
//	                 declarations relatively and an __init__.py is added;
//	                 build from the directory holding the top-level package
//	                 (`cythonize -i yourpkg/_vendor/python/dlpack_cython.pyx`)
//	                 and import or cimport them by the full name only.
//	-check           write nothing; print a unified diff of what would change and
//	                 exit 1 if anything under -out is stale or missing, or if a
//	                 directory dlgen owns holds a file dlgen marked as generated
//	                 but would not write now (left from another release or
//	                 language set), reported as "Only in DIR: NAME". The diff
//	                 is a patch: `git apply -p0` (or `patch -p0`) run where
//	                 dlgen ran brings -out up to date, left-overs deleted.
//	                 A compiled Cython module beside dlpack_cython.pyx built
//	                 from other sources (its fingerprint, the release and a
//	                 hash of python/, differs) is drift too, reported with
//	                 the command that rebuilds it. An -out that does not
//	                 exist is one line, not a diff. The hint names go
//	                 generate ./... where a //go:generate line of the module
//	                 writes -out.
//	-diff X.Y        write nothing; list what changed from release X.Y to
//	                 -dlpack-version, one finding per line as
//	                 "CATEGORY RULE: message" (ABI, API, RULE or INFO; rules
//	                 such as STRUCT_SIZE_SAME, FIELD_OFFSET_SAME,
//	                 ENUM_VALUE_SAME, FUNCTYPE_NO_DELETE, FIELD_NULLABLE_SAME),
//	                 and exit 1 if any ABI, API or RULE finding breaks code
//	                 written for X.Y. Each
//	                 change is reported once, by the rule about the element it
//	                 changes, for all data models at once; an element it moves
//	                 (a field after a wider one, a struct holding it) gets a
//	                 finding of its own. -diff combines with neither -check,
//	                 -lang, -out nor -python-package.
//	-diff-rules      write nothing; list every rule of -diff, one per line,
//	                 with its category and purpose, under the header
//	                 "ID CATEGORY PURPOSE" (as buf's ls-breaking-rules does).
//	                 It combines with no other flag.
//	-h, -help        print this usage to standard output and exit 0.
//	-version         print dlgen's own release ("dlgen vX.Y.Z") and exit 0,
//	                 whatever the other flags.
//	-identify FILE.h write nothing; read a DLPack header (any release, patched or
//	                 not) with a C front end, print the release it matches and
//	                 every difference from dlgen's declarations of it, one per
//	                 line as "WHAT: HOW" (macros, enumerators, typedefs, structs,
//	                 fields and their types, function types, layouts on each C
//	                 data model), and exit 1 if there is any.
//	-schema-yaml     with -identify: print instead, as schema YAML, what the
//	                 header declares that the schema's newest release lacks, with
//	                 since: set, to merge into the schema. -identify combines with
//	                 -schema and -schema-yaml only.
//
// Only files whose content changes are written, and the output is
// byte-identical across runs and machines, so generated files can be checked
// in and verified in CI with -check. Every file starts with a marker that
// names the release of dlgen that wrote it ("Code generated by dlgen
// v0.1.0. DO NOT EDIT."), so a -check failure after upgrading dlgen shows
// as the marker line changing. dlgen owns c/dlpack, go/dlpack, python and
// rust/dlpack under -out: a run removes the files there that start with the
// marker of any release of dlgen but that it no longer writes, and leaves
// every other file (a built extension, say) alone.
//
// Exit status: 0 on success (and a current -out with -check, a header equal
// to a release with -identify, and -h), 1 when -check finds drift, -diff a
// breaking change or -identify a difference, 2 on a usage error (flags that
// do not combine, an unknown flag, language or release), an invalid schema, a
// header -identify cannot read (missing, not C, no DLPack in it), or a
// symbolic link under -out that leads out of it, or anything but a regular
// file (a named pipe) where dlgen reads or writes one. Schema
// errors are reported one per line as file:line:col: message, every one
// found, never a panic. A name that any language dlgen writes reserves
// (typeof, _fields_, box...) is such an error whatever -lang selects: the
// schema feeds every language (docs/schema.md, Names). So is a value the
// schema allows but a selected language cannot hold, named by the backend
// that refuses it:
//
//	my.yaml:119:9: python backend: DLDeviceType.kDLVulkan = -7: the Python modules keep enum values in a 64-bit mask
//
// The C headers of v1.0 and v1.1 also declare the type name
// DLManagedTensorVersioned, which upstream added in v1.2, where a repeated
// typedef is legal (C11 and later, C++): code written for a framework's
// patched copy (NumPy's) compiles, and so does code written for upstream's.
// Define DLGEN_BACKPORTS to 0 for upstream's declarations exactly, or to 1
// for the typedef in C99 too. docs/upstream.md tells more, and how to add a
// new upstream release starting from its header.
//
// To vendor a header for DLPack 1.3 and keep it current:
//
//	dlgen -lang c -dlpack-version 1.3 -out third_party/
//	dlgen -lang c -dlpack-version 1.3 -out third_party/ -check   # in CI
//
// In a Go project, make dlgen a tool of the module (Go 1.24 or later; go.mod
// then pins its version; this works through a module mirror that refuses
// unknown module paths, where go get -tool PKG@VERSION does not; until the
// tag v0.1.0 is pushed, replace it with a checkout too, as README.md shows:
// go mod edit -replace=github.com/dlgen/dlgen=../dlgen) and run it from a
// //go:generate line:
//
//	go mod edit -require=github.com/dlgen/dlgen@v0.1.0 -tool=github.com/dlgen/dlgen/cmd/dlgen
//	go mod tidy
//
//	//go:generate go tool dlgen -lang go -dlpack-version 1.3 -out internal
//
// `go generate ./...` writes the package internal/go/dlpack; in CI, the same
// flags with -check fail when it is stale:
//
//	go tool dlgen -lang go -dlpack-version 1.3 -out internal -check
//
// Without Go, `pip install` a wheel of dlgen's release (built by make
// wheels; on PyPI once uploaded); a pre-commit hook (id dlgen-check) runs
// -check, and under pre-commit a failure names the command that updates the
// files. docs/ci.md has a CI step for each.
package main
