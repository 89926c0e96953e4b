package ir

// Roles name what backends rely on, so that they never look an element up
// by its spelling: a schema may rename DLPACK_MINOR_VERSION or a capsule,
// but the element that plays the role is still found, and a release that
// lacks one the backends need is rejected when the schema is loaded.

// MacroRole is what a value macro means beyond its value.
type MacroRole int

const (
	MacroPlain        MacroRole = iota // nothing a backend relies on
	MacroMajorVersion                  // the release's major number (DLPACK_MAJOR_VERSION)
	MacroMinorVersion                  // the release's minor number (DLPACK_MINOR_VERSION)
	MacroVersion                       // major*100 + minor*10 (DLPACK_VERSION)
	MacroABIVersion                    // the binary layout's version (DLPACK_ABI_VERSION)
)

var macroRoleNames = []string{"", "major_version", "minor_version", "version", "abi_version"}

// String is the role's spelling in the schema ("" for MacroPlain).
func (r MacroRole) String() string { return macroRoleNames[r] }

// MacroRoles lists the roles a schema may give a macro.
func MacroRoles() []MacroRole {
	return []MacroRole{MacroMajorVersion, MacroMinorVersion, MacroVersion, MacroABIVersion}
}

// PythonRole is the part a name plays in the Python protocol.
type PythonRole int

const (
	CapsuleName              PythonRole = iota // capsule of a DLManagedTensor* ("dltensor")
	UsedCapsuleName                            // what a consumer renames it to ("used_dltensor")
	VersionedCapsuleName                       // capsule of a DLManagedTensorVersioned*
	UsedVersionedCapsuleName                   // what a consumer renames that to
	ExchangeAPIAttribute                       // type attribute publishing the C exchange API
	ExchangeAPICapsuleName                     // capsule the attribute holds (else an integer address)
)

var pythonRoleNames = []string{
	"capsule", "used_capsule", "versioned_capsule", "used_versioned_capsule",
	"exchange_api_attribute", "exchange_api_capsule",
}

// String is the role's spelling in the schema.
func (r PythonRole) String() string { return pythonRoleNames[r] }

// PythonRoles lists every Python role.
func PythonRoles() []PythonRole {
	roles := make([]PythonRole, len(pythonRoleNames))
	for i := range roles {
		roles[i] = PythonRole(i)
	}
	return roles
}

// VersionMacros are the macros that say which release a header is, by
// role. A role the release has no macro for is nil. A loaded schema
// guarantees that Major and Minor come together, hold the release's own
// numbers, and that Version (when present) is major*100 + minor*10.
type VersionMacros struct {
	Major, Minor *Macro // from DLPack 1.0
	Version      *Macro // before DLPack 1.0
	ABI          *Macro // DLPack 0.7 and 0.8
}

// Protocol is the Python protocol's names in one release, by role. A loaded
// schema guarantees that Capsule and UsedCapsule are never nil; that the
// versioned capsule names are present, together, exactly when the release
// has major/minor version macros; that ExchangeAPIAttribute is present only
// with them; and ExchangeAPICapsule only with ExchangeAPIAttribute. Any
// other role the release lacks is nil.
type Protocol struct {
	Capsule, UsedCapsule                   *PythonName // "dltensor" and "used_dltensor"
	VersionedCapsule, UsedVersionedCapsule *PythonName // "dltensor_versioned" and "used_dltensor_versioned"
	ExchangeAPIAttribute                   *PythonName // the type attribute that holds the C exchange API
	ExchangeAPICapsule                     *PythonName // nil: the attribute holds an integer address
}

// slot returns the field of p that holds role.
func (p *Protocol) slot(role PythonRole) **PythonName {
	return [...]**PythonName{
		&p.Capsule, &p.UsedCapsule, &p.VersionedCapsule, &p.UsedVersionedCapsule,
		&p.ExchangeAPIAttribute, &p.ExchangeAPICapsule,
	}[role]
}

// Get returns the name playing role, or nil.
func (p *Protocol) Get(role PythonRole) *PythonName { return *p.slot(role) }

// Set makes n the name playing its role.
func (p *Protocol) Set(n *PythonName) { *p.slot(n.Role) = n }

// slot returns the field of m that holds role, or nil for MacroPlain.
func (m *VersionMacros) slot(role MacroRole) **Macro {
	return [...]**Macro{nil, &m.Major, &m.Minor, &m.Version, &m.ABI}[role]
}

// Get returns the macro playing role, or nil.
func (m *VersionMacros) Get(role MacroRole) *Macro {
	if s := m.slot(role); s != nil {
		return *s
	}
	return nil
}

// Set makes mac the macro playing its role; a MacroPlain macro is ignored.
func (m *VersionMacros) Set(mac *Macro) {
	if s := m.slot(mac.Role); s != nil {
		*s = mac
	}
}

// EnumRole is what an enum means to backends and to the checks of a
// foreign tensor (Rules).
type EnumRole int

const (
	EnumPlain        EnumRole = iota // nothing a backend relies on
	DeviceTypeEnum                   // where a tensor's memory lives (DLDeviceType)
	DataTypeCodeEnum                 // the base kind of an element (DLDataTypeCode)
)

var enumRoleNames = []string{"", "device_type", "dtype_code"}

// String is the role's spelling in the schema ("" for EnumPlain).
func (r EnumRole) String() string { return enumRoleNames[r] }

// EnumRoles lists the roles a schema may give an enum.
func EnumRoles() []EnumRole { return []EnumRole{DeviceTypeEnum, DataTypeCodeEnum} }

// FlagRole is what a flag bit means to backends and checks.
type FlagRole int

const (
	FlagPlain         FlagRole = iota // nothing a backend relies on
	ReadOnlyFlag                      // the consumer must not write (READ_ONLY)
	IsCopiedFlag                      // the consumer owns the data alone (IS_COPIED)
	SubbytePaddedFlag                 // sub-byte elements take a byte each (IS_SUBBYTE_TYPE_PADDED)
)

var flagRoleNames = []string{"", "read_only", "is_copied", "subbyte_padded"}

// String is the role's spelling in the schema ("" for FlagPlain).
func (r FlagRole) String() string { return flagRoleNames[r] }

// FlagRoles lists the roles a schema may give a flag bit.
func FlagRoles() []FlagRole { return []FlagRole{ReadOnlyFlag, IsCopiedFlag, SubbytePaddedFlag} }

// EnumsByRole are a release's enums by role; a role no enum plays is nil.
type EnumsByRole struct {
	DeviceType   *Enum // DLDeviceType
	DataTypeCode *Enum // DLDataTypeCode
}

func (e *EnumsByRole) slot(role EnumRole) **Enum {
	return [...]**Enum{nil, &e.DeviceType, &e.DataTypeCode}[role]
}

// Get returns the enum playing role, or nil.
func (e *EnumsByRole) Get(role EnumRole) *Enum {
	if s := e.slot(role); s != nil {
		return *s
	}
	return nil
}

// Set makes en the enum playing its role; an EnumPlain enum is ignored.
func (e *EnumsByRole) Set(en *Enum) {
	if s := e.slot(en.Role); s != nil {
		*s = en
	}
}

// FlagsByRole are a release's flag bits by role. A loaded schema
// guarantees that ReadOnly and IsCopied are present exactly in releases
// with the versioned protocol; SubbytePadded is nil where sub-byte
// elements are always packed.
type FlagsByRole struct {
	ReadOnly      *Flag // the consumer must not write
	IsCopied      *Flag // the consumer owns a private copy
	SubbytePadded *Flag // sub-byte elements take a byte each
}

func (f *FlagsByRole) slot(role FlagRole) **Flag {
	return [...]**Flag{nil, &f.ReadOnly, &f.IsCopied, &f.SubbytePadded}[role]
}

// Get returns the flag playing role, or nil.
func (f *FlagsByRole) Get(role FlagRole) *Flag {
	if s := f.slot(role); s != nil {
		return *s
	}
	return nil
}

// Set makes fl the flag playing its role; a FlagPlain flag is ignored.
func (f *FlagsByRole) Set(fl *Flag) {
	if s := f.slot(fl.Role); s != nil {
		*s = fl
	}
}
