package rust

import (
	"fmt"

	"github.com/dlgen/dlgen/ir"
)

// The import rules, as data the hand-written checker (crate/tensor.rs)
// reads from the generated rules module. What the IR holds (enumerators,
// flags, versions, capsule names) comes from it; the rest is, until the
// schema declares it, stated here once, in the words of the Go runtime
// (dltensor) whose verdicts the crate's checker reproduces.

// Limits every tensor must respect.
const (
	maxNDim = 64
	// addressLimit bounds every byte address relative to data, byte_offset
	// and the byte extent: byte addresses times 8 (bit addresses, for
	// packed sub-byte elements) fit in an int64.
	addressLimit = (1<<63 - 1) / 8
)

// hostDevices are the device types whose memory the CPU reads directly.
var hostDevices = []string{"kDLCPU", "kDLCUDAHost", "kDLROCMHost", "kDLCUDAManaged"}

// unaddressable are type codes whose elements have no defined size, with
// what the error calls them.
var unaddressable = []struct{ code, what string }{{"kDLOpaqueHandle", "opaque-handle"}}

// fixedWidths are the type codes that allow only one number of bits.
var fixedWidths = []struct {
	code string
	bits int
}{{"kDLFloat4_e2m1fn", 4}, {"kDLFloat6_e2m3fn", 6}, {"kDLFloat6_e3m2fn", 6}}

// nullStridesForbiddenFrom is the first release whose tensors may not
// have NULL strides when ndim != 0.
var nullStridesForbiddenFrom = ir.Version{Major: 1, Minor: 2}

// Roles of the flag bits the checker needs, by their C names.
const (
	flagReadOnly      = "DLPACK_FLAG_BITMASK_READ_ONLY"
	flagIsCopied      = "DLPACK_FLAG_BITMASK_IS_COPIED"
	flagSubbytePadded = "DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED"
)

// rules is the view of rust-rules.rs.tmpl; the tables are rendered.
type rules struct {
	Major, Minor                  string // the version macros
	MaxNDim                       int
	AddressLimit                  int64
	NullStrides                   string // "None" or "Some((major, minor))"
	KnownDevices, HostDevices     string // DLDeviceType tables
	KnownCodes                    string // DLDataTypeCode table
	Unaddressable, FixedWidths    string
	ReadOnly, IsCopied            string // flag constants
	Padded                        string // "Some(flag)", or "None" before the release has it
	Capsule, UsedCapsule          string
	Versioned, UsedVersioned      string
	ExchangeAttr, ExchangeCapsule string // "" when the release has none
}

// ruleTables gathers the rules of api, a release with versioned tensors.
func ruleTables(api *ir.API) (*rules, error) {
	r := &rules{MaxNDim: maxNDim, AddressLimit: addressLimit, NullStrides: "None", ReadOnly: "0", IsCopied: "0", Padded: "None"}
	r.Major, r.Minor = api.Versions.Major.Name, api.Versions.Minor.Name
	if !api.Version().Less(nullStridesForbiddenFrom) {
		r.NullStrides = fmt.Sprintf("Some((%d, %d))", nullStridesForbiddenFrom.Major, nullStridesForbiddenFrom.Minor)
	}
	enums := map[string]*ir.Enum{}
	for _, e := range api.Enums() {
		enums[e.Name] = e
	}
	devices, codes := enums["DLDeviceType"], enums["DLDataTypeCode"]
	if devices == nil || codes == nil {
		return nil, fmt.Errorf("the safe layer needs DLDeviceType and DLDataTypeCode")
	}
	has := func(e *ir.Enum, name string) bool {
		for _, v := range e.Values {
			if v.Name == name {
				return true
			}
		}
		return false
	}
	var known, host, knownCodes, unaddr, fixed []string
	for _, v := range devices.Values {
		known = append(known, "DLDeviceType::"+v.Name)
	}
	for _, n := range hostDevices {
		if has(devices, n) {
			host = append(host, "DLDeviceType::"+n)
		}
	}
	for _, v := range codes.Values {
		knownCodes = append(knownCodes, "DLDataTypeCode::"+v.Name)
	}
	for _, u := range unaddressable {
		if has(codes, u.code) {
			unaddr = append(unaddr, fmt.Sprintf("(DLDataTypeCode::%s, %q)", u.code, u.what))
		}
	}
	for _, w := range fixedWidths {
		if has(codes, w.code) {
			fixed = append(fixed, fmt.Sprintf("(DLDataTypeCode::%s, %d)", w.code, w.bits))
		}
	}
	const lead = "pub(crate) const "
	r.KnownDevices = array(lead+"KNOWN_DEVICE_TYPES: &[DLDeviceType] = ", known)
	r.HostDevices = array(lead+"HOST_DEVICE_TYPES: &[DLDeviceType] = ", host)
	r.KnownCodes = array(lead+"KNOWN_TYPE_CODES: &[DLDataTypeCode] = ", knownCodes)
	r.Unaddressable = array(lead+"UNADDRESSABLE_TYPE_CODES: &[(DLDataTypeCode, &str)] = ", unaddr)
	r.FixedWidths = array(lead+"FIXED_WIDTH_TYPE_CODES: &[(DLDataTypeCode, u8)] = ", fixed)
	for _, d := range api.Decls {
		if f, ok := d.(*ir.Flags); ok {
			for _, b := range f.Bits {
				switch b.Name {
				case flagReadOnly:
					r.ReadOnly = b.Name
				case flagIsCopied:
					r.IsCopied = b.Name
				case flagSubbytePadded:
					r.Padded = "Some(" + b.Name + ")"
				}
			}
		}
	}
	if r.ReadOnly == "0" || r.IsCopied == "0" {
		return nil, fmt.Errorf("the safe layer needs the %s and %s flags", flagReadOnly, flagIsCopied)
	}
	p := api.Protocol
	r.Capsule, r.UsedCapsule = p.Capsule.Name, p.UsedCapsule.Name
	r.Versioned, r.UsedVersioned = p.VersionedCapsule.Name, p.UsedVersionedCapsule.Name
	if p.ExchangeAPIAttribute != nil {
		r.ExchangeAttr = p.ExchangeAPIAttribute.Name
	}
	if p.ExchangeAPICapsule != nil {
		r.ExchangeCapsule = p.ExchangeAPICapsule.Name
	}
	return r, nil
}
