//go:build cgo

package dltensor

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
)

// imported holds the managed tensors owned by live imports, so the same
// pointer cannot be consumed twice.
var imported struct {
	sync.Mutex
	m map[unsafe.Pointer]bool
}

func init() { imported.m = map[unsafe.Pointer]bool{} }

func claim(p unsafe.Pointer) error {
	imported.Lock()
	defer imported.Unlock()
	if imported.m[p] {
		return fmt.Errorf("dltensor: %p is owned by a live import; its deleter was not called: %w", p, ErrAlreadyImported)
	}
	imported.m[p] = true
	return nil
}

func unclaim(p unsafe.Pointer) {
	imported.Lock()
	delete(imported.m, p)
	imported.Unlock()
}

// Import takes ownership of a DLManagedTensorVersioned from a producer.
// Everything is validated before the data is touched; on error the
// producer's deleter has already been called and the error wraps
// ErrMalformed (ErrAlreadyImported, without a deleter call, for a pointer
// a live import owns). On success, the last of Close and the deleters of
// re-exports calls the deleter exactly once.
//
// M is the ManagedTensorVersioned of any Go package dlgen generated:
// generated/go/dlpack, or the one dlgen -lang go wrote into your module.
// Its layout is checked once per type; a type laid out otherwise is
// refused with ErrNotDLPackType, and nothing is read through m.
//
// The tensor is checked by the rules of the newest release, or of the one
// WithRelease names, and only the flags that release defines are read; at
// a release before DLPack 1.0, Import refuses with ErrNotInRelease and
// reads nothing through m (its deleter is still the caller's to call).
func Import[M any](p *M, opts ...Option) (*Tensor, error) {
	m, err := convert[dlpack.ManagedTensorVersioned]("Import", p)
	if err != nil {
		return nil, err
	}
	r, err := speaking(opts)
	if err == nil {
		err = r.versionedOnly("ImportLegacy")
	}
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("dltensor: import of a NULL tensor: %w", ErrMalformed)
	}
	if err := claim(unsafe.Pointer(m)); err != nil {
		return nil, err
	}
	s, flags, err := describeVersioned(m, r)
	if err != nil {
		deleteManaged(m, false) // m is gone after this: err holds what was read before
		return nil, err
	}
	s.copied = flags&dlpack.FlagBitmaskIsCopied != 0
	s.managed = m
	t := newTensor(s)
	if flags&dlpack.FlagBitmaskReadOnly != 0 {
		t.readOnly.Store(true)
	}
	return t, nil
}

// describeVersioned is Import's check of m at release r: its major
// version, before anything else is read, then describe. flags are m's
// that r defines.
func describeVersioned(m *dlpack.ManagedTensorVersioned, r *releaseRules) (*storage, dlpack.FlagBitmask, error) {
	if v := m.Version; v.Major != r.version.Major {
		return nil, 0, broken(dlpack.RuleVersionMajor, v.Major, v.Minor, r.version.Major, r.version.Minor)
	}
	flags := m.Flags & r.flags
	s, err := describe(&m.DLTensor, m.Version, flags&dlpack.FlagBitmaskIsSubbyteTypePadded != 0, r)
	return s, flags, err
}

// deleteManaged gives an imported tensor back to its producer.
func deleteManaged(m *dlpack.ManagedTensorVersioned, legacy bool) {
	unclaim(unsafe.Pointer(m))
	if legacy {
		DeleteLegacy((*dlpack.ManagedTensor)(unsafe.Pointer(m)))
	} else {
		DeleteVersioned(m)
	}
}

// ImportLegacy takes ownership of a DLManagedTensor (DLPack < 1.0), as
// Import does, from any Go package dlgen generated. The legacy format has
// no flags: the tensor is writable (call SetReadOnly to treat it as
// read-only) and sub-byte elements are packed. It is checked by the rules
// of the newest release, or of the one WithRelease names.
func ImportLegacy[M any](p *M, opts ...Option) (*Tensor, error) {
	m, err := convert[dlpack.ManagedTensor]("ImportLegacy", p)
	if err != nil {
		return nil, err
	}
	r, err := speaking(opts)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("dltensor: import of a NULL tensor: %w", ErrMalformed)
	}
	// Stored in the versioned field, flagged legacy: the layouts differ, so
	// it is only ever passed back to DeleteLegacy.
	managed := (*dlpack.ManagedTensorVersioned)(unsafe.Pointer(m))
	if err := claim(unsafe.Pointer(m)); err != nil {
		return nil, err
	}
	s, err := describe(&m.DLTensor, dlpack.Version{}, false, r) // older than every versioned tensor
	if err != nil {
		deleteManaged(managed, true)
		return nil, err
	}
	s.managed, s.legacy = managed, true
	return newTensor(s), nil
}
