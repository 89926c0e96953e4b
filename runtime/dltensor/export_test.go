//go:build cgo

package dltensor

import (
	"github.com/dlgen/dlgen/generated/go/dlpack"
	"github.com/dlgen/dlgen/runtime/dltensor/internal/ccheck"
)

// The two ways Import could check a tensor, for BenchmarkImportCheckCVsGo
// and TestCCheckerAgreesWithGoOnTheCorpus: in Go, as it does, or with the C
// helper header's checker through cgo. Either way the description ends up
// copied into Go memory; what Import does around it (claiming the pointer,
// the Tensor) is the same both ways and left out.

// checked keeps every description made here reachable, so that the
// compiler allocates it as Import does, on the heap, on both sides.
var checked *storage

// GoImportCheck is Import's check of m: nil, or the *RuleError.
func GoImportCheck(m *dlpack.ManagedTensorVersioned) error {
	s, _, err := describeVersioned(m, newest)
	checked = s
	return err
}

// GoImportLegacyCheck is ImportLegacy's check of m.
func GoImportLegacyCheck(m *dlpack.ManagedTensor) error {
	s, err := describe(&m.DLTensor, dlpack.Version{}, false, newest)
	checked = s
	return err
}

// CImportCheck is what Import would do with the C checker: one cgo call
// with m's pointer, then, for a tensor it accepts, the description copied.
func CImportCheck(m *dlpack.ManagedTensorVersioned) bool {
	if !ccheck.Versioned(m) {
		return false
	}
	checked = copyDescription(&m.DLTensor, m.Flags&dlpack.FlagBitmaskIsSubbyteTypePadded != 0)
	return true
}

// CImportLegacyCheck is CImportCheck for ImportLegacy.
func CImportLegacyCheck(m *dlpack.ManagedTensor) bool {
	if !ccheck.Legacy(m) {
		return false
	}
	checked = copyDescription(&m.DLTensor, false)
	return true
}
