package dltensor

import (
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/dlgen/dlgen/generated/go/dlpack"
)

// A Release is the DLPack release an exchange speaks, as the package that
// dlgen -lang go wrote for it tells: pass that package's Release variable
// to WithRelease. Its methods answer from that package's own tables.
type Release interface {
	DLPackRelease() string                                                    // "1.1", or "main"
	DLPackVersion() (major, minor uint32, versioned bool)                     // versioned is false before DLPack 1.0
	DLPackFlags() uint64                                                      // every flag bit the release defines
	DLPackDataTypeCode(code uint8) (known, addressable bool, fixedBits uint8) // the rules of a type code
	DLPackHostReadable(deviceType int32) bool                                 // the CPU reads this memory
}

// An Option adjusts one exchange (Export, ExportAndClose, ExportLegacy,
// Import, ImportLegacy): WithRelease is the one there is.
type Option struct{ rules *releaseRules }

// WithRelease makes an exchange speak release r, the Release of the
// package dlgen -lang go wrote into your module for the release you
// pinned (-dlpack-version): an export carries r's version and only the
// flags r defines, and refuses what a consumer of r would refuse (a type
// code r does not define, padded sub-byte elements before 1.1); an import
// checks the tensor by r's rules, and keeps only the flags r defines.
// Without it, an exchange speaks the newest release, that of
// github.com/dlgen/dlgen/generated/go/dlpack. Releases before DLPack 1.0
// have no versioned tensor: there Export and Import refuse with
// ErrNotInRelease, and ExportLegacy and ImportLegacy are the exchange.
//
// r's answers are read once per release and kept: keep the Option in a
// package variable, or call WithRelease at every exchange, as you like.
func WithRelease(r Release) Option {
	if r == nil {
		return Option{&releaseRules{name: "nil", err: fmt.Errorf("dltensor: WithRelease(nil): pass the Release of the package dlgen -lang go wrote (dlpack.Release): %w", ErrNotInRelease)}}
	}
	if !reflect.ValueOf(r).Comparable() { // not a map key: read it every time
		return Option{tabulate(r)}
	}
	if rules, ok := releases.Load(r); ok {
		return Option{rules.(*releaseRules)}
	}
	rules, _ := releases.LoadOrStore(r, tabulate(r))
	return Option{rules.(*releaseRules)}
}

// ErrNotInRelease: the DLPack release an exchange speaks (WithRelease)
// cannot make it: it has no versioned tensor, no flag to say what the
// tensor needs said, or no code for its element type; or its major
// version is not the one dltensor's layouts are. Nothing was exchanged: an
// import refused so read nothing, and the producer's deleter did not run.
var ErrNotInRelease = errors.New("not in the DLPack release the exchange speaks")

// releaseRules is a Release, read once: what exchanges consult.
type releaseRules struct {
	name      string
	version   dlpack.Version
	versioned bool
	flags     dlpack.FlagBitmask
	codes     [256]codeRules
	readable  func(int32) bool
	err       error // the release cannot be spoken at all
}

type codeRules struct {
	known, addressable bool
	fixedBits          uint8
}

var (
	releases sync.Map // Release -> *releaseRules
	// newest is the release of dlgen's own generated package, which every
	// exchange without WithRelease speaks and every tensor is made by.
	newest = tabulate(dlpack.Release)
)

func tabulate(r Release) *releaseRules {
	major, minor, versioned := r.DLPackVersion()
	t := &releaseRules{name: r.DLPackRelease(), version: dlpack.Version{Major: major, Minor: minor},
		versioned: versioned, flags: dlpack.FlagBitmask(r.DLPackFlags()), readable: r.DLPackHostReadable}
	for c := range t.codes {
		k := &t.codes[c]
		k.known, k.addressable, k.fixedBits = r.DLPackDataTypeCode(uint8(c))
	}
	if versioned && major != dlpack.MajorVersion {
		t.err = fmt.Errorf("dltensor: DLPack %s has major version %d, and dltensor's tensors are laid out as in major version %d: %w",
			t.name, major, dlpack.MajorVersion, ErrNotInRelease)
	}
	return t
}

// speaking returns the release opts name (the last one), or newest, and
// whether it can be spoken at all.
func speaking(opts []Option) (*releaseRules, error) {
	r := newest
	for _, o := range opts {
		if o.rules != nil {
			r = o.rules
		}
	}
	return r, r.err
}

// versionedOnly refuses an exchange of a versioned tensor at a release
// that has none; fn names the legacy function to call instead.
func (r *releaseRules) versionedOnly(fn string) error {
	if r.versioned {
		return nil
	}
	return fmt.Errorf("dltensor: DLPack %s has no versioned tensor (DLManagedTensorVersioned came with DLPack 1.0): call %s: %w",
		r.name, fn, ErrNotInRelease)
}

// exportable refuses to export s, with the flags it needs, where a
// consumer of release r would refuse it or could not be told them.
func (r *releaseRules) exportable(s *storage, flags dlpack.FlagBitmask) error {
	if err := r.checkDtype(s.dtype); err != nil {
		var rule *RuleError
		errors.As(err, &rule)
		return fmt.Errorf("dltensor: a consumer of DLPack %s would refuse the tensor (%s): %w", r.name, rule.Message, ErrNotInRelease)
	}
	if missing := flags &^ r.flags; missing != 0 {
		return fmt.Errorf("dltensor: DLPack %s has no flag to say that the tensor is %s: %w", r.name, flagWords(missing), ErrNotInRelease)
	}
	return nil
}

// flagWords says what the flags of f say of a tensor.
func flagWords(f dlpack.FlagBitmask) string {
	switch {
	case f&dlpack.FlagBitmaskReadOnly != 0:
		return "read-only"
	case f&dlpack.FlagBitmaskIsSubbyteTypePadded != 0:
		return "of padded sub-byte elements"
	case f&dlpack.FlagBitmaskIsCopied != 0:
		return "a copy"
	}
	return fmt.Sprintf("flagged %#x", uint64(f))
}

// checkDtype is the rules of docs/rules.md on a dtype, at release r.
func (r *releaseRules) checkDtype(d dlpack.DataType) error {
	code, width := d.Code, d.Bits
	k := r.codes[uint8(code)]
	switch {
	case !k.known:
		return broken(dlpack.RuleDtypeUnknown, uint8(code))
	case !k.addressable:
		return broken(dlpack.RuleDtypeOpaque, uint8(code), code.String())
	case width == 0 || d.Lanes == 0:
		return broken(dlpack.RuleDtypeZero, width, d.Lanes)
	case k.fixedBits != 0 && width != k.fixedBits:
		return broken(dlpack.RuleDtypeBits, uint8(code), code.String(), width, k.fixedBits)
	}
	return nil
}
