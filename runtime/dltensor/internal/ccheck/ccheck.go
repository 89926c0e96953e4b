// Package ccheck calls the C helper header's import checks
// (dlgen_check_versioned and dlgen_check_legacy in
// generated/c/dlpack/dlpack_helpers.h) through cgo, as dltensor would if it
// checked in C instead of Go. It serves the benchmark that decided dltensor
// keeps its Go checker, and the test that the two checkers agree on the
// conformance corpus (docs/rules.md).
package ccheck

/*
#cgo CFLAGS: -I${SRCDIR}/../../../../generated/c
#include <dlpack/dlpack_helpers.h>

// The fast path: no dlgen_error is filled, so Go hands over the tensor's
// pointer only (a Go pointer to an error would escape to the heap).
static int check_versioned(const DLManagedTensorVersioned *m) { return (int)dlgen_check_versioned(m, NULL); }
static int check_legacy(const DLManagedTensor *m) { return (int)dlgen_check_legacy(m, NULL); }

// A refusal's rule id and words: the message goes into buf, as
// dlgen_format_error writes it.
static const char *explain(int versioned, const void *m, char *buf, size_t size) {
  dlgen_error err;
  dlgen_rule rule = versioned ? dlgen_check_versioned((const DLManagedTensorVersioned *)m, &err)
                              : dlgen_check_legacy((const DLManagedTensor *)m, &err);
  if (rule == DLGEN_OK) {
    buf[0] = '\0';
    return "";
  }
  dlgen_format_error(&err, buf, size);
  return dlgen_rule_id(rule);
}
*/
import "C"

import (
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
)

// Versioned reports whether m passes dlgen_check_versioned: one cgo call
// with m's pointer, what an import that checked in C would pay.
func Versioned(m *dlpack.ManagedTensorVersioned) bool {
	return C.check_versioned((*C.DLManagedTensorVersioned)(unsafe.Pointer(m))) == 0
}

// Legacy reports whether m passes dlgen_check_legacy.
func Legacy(m *dlpack.ManagedTensor) bool {
	return C.check_legacy((*C.DLManagedTensor)(unsafe.Pointer(m))) == 0
}

// VersionedRefusal is the id of the first check m fails, as the corpus
// names it, and the message dlgen_format_error writes; "" and "" when m
// passes.
func VersionedRefusal(m *dlpack.ManagedTensorVersioned) (rule, message string) {
	return explain(1, unsafe.Pointer(m))
}

// LegacyRefusal is VersionedRefusal for a legacy tensor.
func LegacyRefusal(m *dlpack.ManagedTensor) (rule, message string) {
	return explain(0, unsafe.Pointer(m))
}

func explain(versioned C.int, m unsafe.Pointer) (rule, message string) {
	var buf [1024]C.char
	id := C.explain(versioned, m, &buf[0], C.size_t(len(buf)))
	return C.GoString(id), C.GoString(&buf[0])
}
