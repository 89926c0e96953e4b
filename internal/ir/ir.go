// Package ir is dlgen's validated intermediate representation of the DLPack
// ABI: every declaration of every supported release, each with the release
// that introduced it and its renames, plus the computed memory layout of each
// struct on each C data model (ABIs).
//
// A Schema holds all releases at once; Schema.At resolves one release
// completely and returns an API, the flat view that backends render: only
// what exists in that release, renames and retypes applied (the previous
// spelling kept as Previous), each macro with its value, and what backends
// rely on held by role rather than found by spelling: version macros
// (VersionMacros), Python names (Protocol), the device-type and type-code
// enums (EnumsByRole), the read-only, is-copied and padded flags
// (FlagsByRole), and the versioned protocol (API.Versioned). A field that
// holds an enum's values or a flags group's bits says so (Field.Holds);
// an enum's Storage, the type its values are kept in, is apart from the
// type C++ declares it on (CXXBase). LayoutChecks is the one list of layout
// facts every binding guards and the ABI diff compares.
//
// The rules a consumer checks before it touches a foreign tensor are data
// here too (rules.go): when each pointer field may be NULL (Field.Nullable,
// by the tensor's own version), which device types the CPU reads
// (Enumerator.HostReadable), which type codes allow one width or cannot be
// addressed (Enumerator.Bits, Enumerator.Opaque), the names of element
// types (Enumerator.DataTypes, API.DataTypeNames), and Rules: the limit on
// dimensions and one message per Check, the vocabulary every language's
// hand-written checker implements in the same order. docs/rules.md is the
// manual.
//
// Schemas are built by package schema, which also validates them (every
// role a release needs is present), so everything here may assume
// well-formed input.
package ir

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a DLPack release, such as 1.3, or upstream's main branch.
type Version struct {
	Major, Minor int // the release number, 1 and 3 for 1.3
	// Main marks upstream's unreleased main branch after release
	// Major.Minor, whose version macros it still carries: newer than
	// Major.Minor, older than any later release. A schema lists it last,
	// and never makes it the default.
	Main bool
}

// MainName is how schemas and the command line spell the main branch.
const MainName = "main"

// ParseVersion parses a release number, "MAJOR.MINOR", each part a decimal
// number without leading zeros ("1.3", never "1.03" or "01.3"). The main
// branch is not a number: Schema.ParseRelease resolves "main".
func ParseVersion(s string) (Version, error) {
	major, minor, ok := strings.Cut(s, ".")
	if !ok || !decimal(major) || !decimal(minor) {
		return Version{}, fmt.Errorf("version %q is not of the form MAJOR.MINOR (decimal numbers without leading zeros)", s)
	}
	ma, err1 := strconv.ParseUint(major, 10, 16)
	mi, err2 := strconv.ParseUint(minor, 10, 16)
	if err1 != nil || err2 != nil {
		return Version{}, fmt.Errorf("version %q is out of range", s)
	}
	return Version{Major: int(ma), Minor: int(mi)}, nil
}

// decimal reports whether s is a decimal number as releases spell them:
// digits only, and no leading zero unless it is "0".
func decimal(s string) bool {
	if s == "" || s[0] == '0' && len(s) > 1 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// String is the release as the schema spells it: "1.3", or "main".
func (v Version) String() string {
	if v.Main {
		return MainName
	}
	return fmt.Sprintf("%d.%d", v.Major, v.Minor)
}

// Title is the release as prose names it: "v1.3", or "main (unreleased,
// after v1.3)".
func (v Version) Title() string {
	if v.Main {
		return fmt.Sprintf("%s (unreleased, after v%d.%d)", MainName, v.Major, v.Minor)
	}
	return "v" + v.String()
}

// Less reports whether v is older than w.
func (v Version) Less(w Version) bool {
	if v.Major != w.Major {
		return v.Major < w.Major
	}
	if v.Minor != w.Minor {
		return v.Minor < w.Minor
	}
	return !v.Main && w.Main
}

// Pos is a position in a schema file.
type Pos struct {
	File      string // the file name the schema was loaded as
	Line, Col int    // 1-based
}

// String is the position as error messages begin: file:line:col.
func (p Pos) String() string { return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col) }

// Life says in which releases an element exists: from Since up to, but not
// including, Until (when set).
type Life struct {
	Since Version  // the first release with the element
	Until *Version // the first release without it; nil while it lasts
}

// In reports whether the element exists in release v.
func (l Life) In(v Version) bool {
	return !v.Less(l.Since) && (l.Until == nil || v.Less(*l.Until))
}

// Rename records that before release In an element was spelled From.
type Rename struct {
	In   Version // the release with the new spelling
	From string  // the spelling before In
}

// Retype records that before release In a field had type From.
type Retype struct {
	In   Version // the release with the new type
	From *Type   // the type before In
}

// Reword records that before release In an element's doc read From: the
// release added a note to upstream's comment.
type Reword struct {
	In   Version // the release with the new doc
	From string  // the doc before In
	// Earlier, when set, is an older rewording: before Earlier.In the doc
	// read Earlier.From (Earlier.In is older than In).
	Earlier *Reword
}

// Schema is every declaration of every supported release.
type Schema struct {
	Name        string        // the schema's name, "dlpack"
	HeaderGuard string        // the C header's include guard
	Releases    []Release     // oldest first
	Macros      []*Macro      // the header preamble's macros, in order
	Decls       []Decl        // in C declaration order
	Python      []*PythonName // the Python protocol's strings
	Rules       Rules         // the import rules and limits
}

// Release is one supported DLPack release.
type Release struct {
	Version Version // the release number, or the main branch
	// Commit is the dmlc/dlpack commit whose header the release's facts
	// were checked against; the main branch always names one.
	Commit string
	Pos    Pos // where the schema lists the release
}

// Newest returns the newest release, the default one: the main branch is
// never the default.
func (s *Schema) Newest() Version {
	for i := len(s.Releases) - 1; i > 0; i-- {
		if !s.Releases[i].Version.Main {
			return s.Releases[i].Version
		}
	}
	return s.Releases[0].Version
}

// Latest returns the last release listed: the main branch when the schema
// has it, else Newest.
func (s *Schema) Latest() Version { return s.Releases[len(s.Releases)-1].Version }

// Lookup returns the release v, if supported.
func (s *Schema) Lookup(v Version) (Release, bool) {
	for _, r := range s.Releases {
		if r.Version == v {
			return r, true
		}
	}
	return Release{}, false
}

// ParseRelease parses a release of s as the command line spells it:
// "MAJOR.MINOR", or "main" for the main branch. The error lists the known
// releases.
func (s *Schema) ParseRelease(text string) (Version, error) {
	v, err := ParseVersion(text)
	if text == MainName {
		v, err = Version{}, fmt.Errorf("this schema has no %s release", MainName)
		if last := s.Latest(); last.Main {
			v, err = last, nil
		}
	}
	if err == nil {
		if _, ok := s.Lookup(v); !ok {
			err = fmt.Errorf("unknown DLPack version %s", v)
		}
	}
	if err != nil {
		return v, fmt.Errorf("%w (known: %s)", err, strings.Join(s.versions(), ", "))
	}
	return v, nil
}

func (s *Schema) versions() []string {
	out := make([]string, len(s.Releases))
	for i, r := range s.Releases {
		out[i] = r.Version.String()
	}
	return out
}

// MacroKind tells backends how to spell a macro.
type MacroKind int

const (
	MacroInteger MacroKind = iota // an integer value that may change per release
	MacroExternC                  // extern "C" under C++, empty under C
	MacroDLL                      // the Windows dllexport/dllimport prefix
)

// Macro is a preprocessor macro of the header preamble.
type Macro struct {
	Name   string       // the C name, such as DLPACK_MAJOR_VERSION
	Kind   MacroKind    // how backends spell it
	Role   MacroRole    // for MacroInteger
	Doc    string       // its documentation, as prose
	Life   Life         // the releases that have it
	Values []MacroValue // for MacroInteger, oldest first
	// Value is the value in the release of the API the macro belongs to
	// (set by Schema.At; zero in a Schema).
	Value int64
	Pos   Pos // where the schema declares it
}

// MacroValue is the value a macro takes from release Since on.
type MacroValue struct {
	Since Version // the first release with this value
	Value int64   // the value
	Pos   Pos     // where the schema gives it
}

// valueAt returns the macro's value in release v.
func (m *Macro) valueAt(v Version) int64 {
	var val int64
	for _, mv := range m.Values {
		if !v.Less(mv.Since) {
			val = mv.Value
		}
	}
	return val
}

// Decl is a top-level declaration: *Struct, *Enum, *Flags or *FuncType.
type Decl interface {
	DeclName() string // the C name it declares
	DeclLife() Life   // the releases that have it
	DeclPos() Pos     // where the schema declares it
}

// Struct is a C struct, declared as a typedef of an (optionally tagged)
// struct.
type Struct struct {
	Name string // the typedef's name, such as DLTensor
	Tag  string // the struct tag, or "" for an anonymous struct
	Doc  string // its documentation, as prose
	Life Life   // the releases that have it
	// Reworded is its doc before a release.
	Reworded *Reword
	Fields   []*Field // in declaration order, of every release
	Pos      Pos      // where the schema declares it
	// TypedefSince is the release from which Name is a typedef; before it
	// the struct is only "struct Tag". Nil: a typedef from the start.
	TypedefSince *Version
}

// Typedef reports whether Name is a typedef in release v.
func (s *Struct) Typedef(v Version) bool { return s.TypedefSince == nil || !v.Less(*s.TypedefSince) }

// CType spells the struct as C code of release v refers to it.
func (s *Struct) CType(v Version) string {
	if s.Typedef(v) {
		return s.Name
	}
	return "struct " + s.Tag
}

// Field is a struct member.
type Field struct {
	Name     string  // the member's name
	Type     *Type   // its type, as of the newest release that has the field
	Doc      string  // its documentation, as prose
	Life     Life    // the releases that have it
	Retyped  *Retype // its type before a release
	Reworded *Reword // its doc before a release
	// Holds is the *Enum or *Flags whose values an integer field holds
	// (DLDataType.code holds DLDataTypeCode), stored as the field's type;
	// nil for other fields.
	Holds Decl
	// Nullable says when a pointer field may be NULL (NullNever for other
	// fields).
	Nullable Nullable
	Pos      Pos // where the schema declares it
}

// Enum is a C enum whose values are kept in Storage.
type Enum struct {
	Name string // the typedef's name, such as DLDeviceType
	// Storage is the fixed-width C integer type the values are kept in:
	// the type of a field that holds them, and Go's and Rust's type for
	// the enum. A field of the enum type itself takes a C int.
	Storage string
	// CXXBase is the type C++ declares the enum on (enum : int32_t) from
	// release CXXBaseSince; "" if never. An API carries it only from that
	// release on.
	CXXBase          string
	CXXBaseSince     *Version      // see CXXBase
	Role             EnumRole      // what backends rely on it for, if anything
	UnsignedLiterals bool          // enumerators are written with a U suffix
	Doc              string        // its documentation, as prose
	Life             Life          // the releases that have it
	Values           []*Enumerator // in declaration order, of every release
	Pos              Pos           // where the schema declares it
}

// Enumerator is one named value of an Enum.
type Enumerator struct {
	Name     string  // the C name, such as kDLCPU
	Value    int64   // the value
	Doc      string  // its documentation, as prose
	Life     Life    // the releases that have it
	Renamed  *Rename // its name before a release
	Reworded *Reword // its doc before a release
	// Previous is, in an API, the enumerator's spelling before its rename
	// when the release comes after it; "" otherwise.
	Previous string
	// HostReadable: a device type whose memory the CPU reads directly.
	HostReadable bool
	// Streamless: a device type without streams, where __dlpack__ takes
	// only stream=None (the array API's rule).
	Streamless bool
	// Opaque: a type code whose elements cannot be addressed.
	Opaque bool
	// Bits is the only width a type code allows; 0 for any.
	Bits int
	// DataTypes are the names of a type code's element types.
	DataTypes []DataTypeName
	// Float is how a small float type code encodes a value in its bits;
	// nil for other codes, whose elements are read by their width.
	Float *FloatFormat
	Pos   Pos // where the schema declares it
}

// FloatFormat is the encoding of a small float (8 bits or fewer): a sign
// bit unless Special is "e8m0", Exponent exponent bits with bias Bias,
// Mantissa mantissa bits, and what the encoding keeps for infinities and
// NaN (Special).
type FloatFormat struct {
	Exponent int // exponent bits
	Mantissa int // mantissa bits
	Bias     int // exponent bias
	// Special is "ieee" (all-ones exponent: infinities and NaNs), "fn"
	// (finite; all ones is NaN), "fnuz" (finite, unsigned zero: the
	// negative zero's bits are the NaN), "finite" (no infinity, no NaN) or
	// "e8m0" (unsigned, exponent only; all ones is NaN).
	Special string
}

// FloatSpecials are the encodings FloatFormat.Special names.
var FloatSpecials = []string{"ieee", "fn", "fnuz", "finite", "e8m0"}

// Width is the bits one element of f takes.
func (f FloatFormat) Width() int {
	if f.Special == "e8m0" {
		return f.Exponent + f.Mantissa
	}
	return 1 + f.Exponent + f.Mantissa
}

// Flags is a group of single-bit mask macros for one integer field.
type Flags struct {
	Name string  // the common prefix; not emitted in C
	Type string  // the C type of the field the bits belong to
	Doc  string  // its documentation, as prose
	Life Life    // the releases that have it
	Bits []*Flag // in declaration order, of every release
	Pos  Pos     // where the schema declares it
}

// Flag is one bit of a Flags group.
type Flag struct {
	Name string   // the C macro's name, such as DLPACK_FLAG_BITMASK_READ_ONLY
	Bit  int      // the bit's position: the mask is 1 << Bit
	Role FlagRole // what backends rely on it for, if anything
	Doc  string   // its documentation, as prose
	Life Life     // the releases that have it
	Pos  Pos      // where the schema declares it
}

// FuncType is a typedef of a pointer to function.
type FuncType struct {
	Name string     // the typedef's name
	Doc  string     // its documentation, as prose
	Life Life       // the releases that have it
	Sig  *Signature // what the function returns and takes
	Pos  Pos        // where the schema declares it
}

// Signature is the return type and parameters of a function pointer.
type Signature struct {
	Returns *Type    // the return type; a Scalar "void" for none
	Params  []*Param // in order
}

// Param is a named parameter of a Signature.
type Param struct {
	Name string // the parameter's name in C
	Type *Type  // its type
}

// PythonName is a string of the Python-level protocol: a capsule name or a
// type attribute, with the role it plays.
type PythonName struct {
	Name    string     // the string, such as "dltensor_versioned"
	Role    PythonRole // the part it plays in the protocol
	Doc     string     // its documentation, as prose
	Life    Life       // the releases that have it
	Renamed *Rename    // its spelling before a release
	// Previous is, in an API, the name's spelling before its rename when
	// the release comes after it; "" otherwise.
	Previous string
	Pos      Pos // where the schema declares it
}

// DeclName is d.Name.
func (d *Struct) DeclName() string { return d.Name }

// DeclName is d.Name.
func (d *Enum) DeclName() string { return d.Name }

// DeclName is d.Name.
func (d *Flags) DeclName() string { return d.Name }

// DeclName is d.Name.
func (d *FuncType) DeclName() string { return d.Name }

// DeclLife is d.Life.
func (d *Struct) DeclLife() Life { return d.Life }

// DeclLife is d.Life.
func (d *Enum) DeclLife() Life { return d.Life }

// DeclLife is d.Life.
func (d *Flags) DeclLife() Life { return d.Life }

// DeclLife is d.Life.
func (d *FuncType) DeclLife() Life { return d.Life }

// DeclPos is d.Pos.
func (d *Struct) DeclPos() Pos { return d.Pos }

// DeclPos is d.Pos.
func (d *Enum) DeclPos() Pos { return d.Pos }

// DeclPos is d.Pos.
func (d *Flags) DeclPos() Pos { return d.Pos }

// DeclPos is d.Pos.
func (d *FuncType) DeclPos() Pos { return d.Pos }
