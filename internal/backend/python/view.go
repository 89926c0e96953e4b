package python

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dlgen/dlgen/internal/backend"
	"github.com/dlgen/dlgen/internal/ir"
)

// view is what the templates render for one release: every decision about
// the declarations is made here, from the IR, and the templates only spell
// them. Type spellings come from the two namers, ctype (ctypes.go) and
// declarator (cython.go).
type view struct {
	Marker, License string
	Version, Title  string // "1.3"; the release as prose names it (ir.Version.Title)
	Schema          string // how the files name their schema
	Package         string // the package python/ is (dlgen -python-package); "" for top-level modules
	// Versioned: the release has the versioned protocol (DLPack 1.0 and
	// later), and with it the hand-written protocol, the Cython module and
	// the header it includes.
	Versioned bool
	// Fingerprint is the sources' fingerprint (fingerprint.go), as the
	// templates render it: unhashed, until Generate stamps the hash.
	Fingerprint string

	// Python-level declarations both modules define alike.
	Constants []constant // integer macros, then flag bits
	Enums     []enum
	Capsules  []capsule

	// ctypes declarations (dlpack_ctypes.py).
	Structs   []structure
	FuncTypes []functype
	Leaves    []structLeaves // every struct's scalar fields, for the protocol (versioned releases)
	Layouts   []layout       // the layout check, one branch per C data model

	// Cython declarations (dlpack.pxd, dlpack_cython.pyx).
	CDecls   []cdecl  // the header's declarations, in its order
	Cimports []string // the structs and function types the sources take by name

	// Tables the hand-written sources read (see handover.go), rendered in
	// the "tables" block of dlpack_declarations.py.tmpl for both modules:
	// the release and its flags by role, and the import rules of
	// docs/rules.md (ir.Rules and the facts on fields and enumerators).
	// Cython code copies what its C paths need into C variables when the
	// module is imported.
	Rules    *rules
	Exchange *exchange // the C exchange API's names; nil before DLPack 1.2
}

// rules are the tables of a versioned release, as Python source text.
type rules struct {
	Major, Minor string // the version macros, by role
	// The flag bits by role: macro names, "0" for a role the release lacks.
	ReadOnly, IsCopied, SubbytePadded string
	MaxDims                           int
	Nullables                         []nullable
	TypeCodes                         []typeCode
	SmallFloats                       []typeCode // the type codes with a Float
	HostReadable                      []constant // Name: the enumerator, Value: its value
	Streamless                        []constant // Name: the enumerator, Value: its value
	DataTypes                         []ir.NamedDataType
	Messages                          []message
}

// nullable is when Field ("DLTensor.strides") may be NULL: When, or Before
// in tensors older than Changed ("(1, 2)"; "None" and "None" when the rule
// never changed).
type nullable struct{ Field, When, Changed, Before string }

// typeCode is a type code's facts: its enumerator, whether its elements are
// opaque, and the only width it allows (0: any).
type typeCode struct {
	Value  int64
	Name   string
	Opaque bool
	Bits   int
	Float  *ir.FloatFormat // a small float's encoding, or nil
}

// message is a check's message: its id, the Python exception, its words as
// Python string literals of at most messageWidth columns each, and its
// parameters in the order checkers pass them.
type message struct {
	ID, Exception string
	Text          []string
	Params        []string
}

// messageWidth bounds the pieces of a message's text, which the template
// indents by 9 (8 and a parenthesis) and ruff keeps within 100 columns.
const messageWidth = 89

type constant struct{ Name, Doc, Value string }

type enum struct {
	Name, Doc string
	Members   []constant
}

// capsule is a capsule name: Name is its Python constant, CName its
// C-string twin in the Cython module, Value the name itself.
type capsule struct{ Name, CName, Doc, Value string }

type structure struct {
	Name, Doc string
	Fields    []field // Type is the ctypes spelling
}

type field struct{ Name, Type, Doc string }

// functype is a function-pointer typedef, in ctypes spellings.
type functype struct {
	Name, Doc string
	Result    string
	Params    []string
}

type structLeaves struct {
	Name   string
	Leaves []leaf
}

// leaf is a scalar field, a dotted path through nested structs, and its
// struct-module code ("P": a pointer, whose size is the ABI's).
type leaf struct{ Path, Code string }

type layout struct {
	ABI                 string
	PtrSize, Int64Align int // the facts of the model, as ctypes finds them
	Checks              []check
}

type check struct {
	Struct, Field string // Field is "" for the size
	Want          int
}

// cdecl is a declaration of dlpack.pxd: Kind is struct, enum, flags or
// functype; Members are a struct's field declarators or an enum's names;
// Decl is a function type's declarator.
type cdecl struct {
	Kind, Name, Doc string
	Typedef         bool // a struct the header typedefs (else only its tag)
	Members         []string
	Decl            string
}

type exchange struct {
	Attribute string // the type attribute publishing the table
	Previous  string // its spelling in the release before, if renamed
	Capsule   string // the capsule holding the table; "" where it is an integer address
}

func (b Backend) view(api *ir.API) (*view, error) {
	v := api.Version()
	m := &view{Marker: backend.Marker, License: backend.SPDX, Version: v.String(), Title: v.Title(),
		Schema: b.Schema, Package: b.Package, Versioned: api.Versioned(), Fingerprint: unhashed(v.String())}
	for _, mac := range api.Macros {
		if mac.Kind == ir.MacroInteger {
			m.Constants = append(m.Constants, constant{Name: mac.Name, Doc: mac.Doc, Value: fmt.Sprint(mac.Value)})
		}
	}
	m.addProtocol(api.Protocol)
	for _, d := range api.Decls {
		if err := m.addDecl(d); err != nil {
			return nil, err
		}
		m.CDecls = append(m.CDecls, cDecl(d, v))
		switch d.(type) {
		case *ir.Struct, *ir.FuncType:
			m.Cimports = append(m.Cimports, d.DeclName())
		}
	}
	sort.Strings(m.Cimports)
	if m.Versioned {
		r, err := rulesOf(api)
		if err != nil {
			return nil, err
		}
		m.Rules = r
	}
	for _, abi := range ir.ABIs {
		m.Layouts = append(m.Layouts, layoutOn(api, abi))
	}
	return m, nil
}

// addProtocol adds the capsules' names and the C exchange API's.
func (m *view) addProtocol(pr ir.Protocol) {
	for _, c := range []struct {
		name         *ir.PythonName
		python, cstr string
	}{
		{pr.Capsule, "CAPSULE_NAME", "_NAME"},
		{pr.UsedCapsule, "USED_CAPSULE_NAME", "_USED_NAME"},
		{pr.VersionedCapsule, "VERSIONED_CAPSULE_NAME", "_VNAME"},
		{pr.UsedVersionedCapsule, "USED_VERSIONED_CAPSULE_NAME", "_USED_VNAME"},
	} {
		if c.name != nil {
			m.Capsules = append(m.Capsules, capsule{Name: c.python, CName: c.cstr, Doc: c.name.Doc, Value: c.name.Name})
		}
	}
	if a := pr.ExchangeAPIAttribute; a != nil {
		m.Exchange = &exchange{Attribute: a.Name, Previous: a.Previous}
		if c := pr.ExchangeAPICapsule; c != nil {
			m.Exchange.Capsule = c.Name
		}
	}
}

// addDecl adds the Python declaration of d: an enum, the constants of a
// flags type, a ctypes structure, a function pointer type.
func (m *view) addDecl(d ir.Decl) error {
	switch d := d.(type) {
	case *ir.Enum:
		e, err := pythonEnum(d)
		if err != nil {
			return err
		}
		m.Enums = append(m.Enums, e)
	case *ir.Flags:
		for _, f := range d.Bits {
			m.Constants = append(m.Constants, constant{Name: f.Name, Doc: f.Doc, Value: fmt.Sprintf("0x%x", uint64(1)<<f.Bit)})
		}
	case *ir.Struct:
		s := structure{Name: d.Name, Doc: d.Doc}
		for _, f := range d.Fields {
			t, err := ctype(f.Type)
			if err != nil {
				return backend.Errorf(f.Pos, "%s.%s: %v", d.Name, f.Name, err)
			}
			s.Fields = append(s.Fields, field{Name: f.Name, Type: t, Doc: f.Doc})
		}
		m.Structs = append(m.Structs, s)
		if m.Versioned {
			m.Leaves = append(m.Leaves, structLeaves{Name: d.Name, Leaves: leaves(d, "")})
		}
	case *ir.FuncType:
		ft := functype{Name: d.Name, Doc: d.Doc}
		var err error
		if ft.Result, err = ctype(d.Sig.Returns); err != nil {
			return backend.Errorf(d.Pos, "%s: %v", d.Name, err)
		}
		for _, p := range d.Sig.Params {
			t, err := ctype(p.Type)
			if err != nil {
				return backend.Errorf(d.Pos, "%s: %v", d.Name, err)
			}
			ft.Params = append(ft.Params, t)
		}
		m.FuncTypes = append(m.FuncTypes, ft)
	}
	return nil
}

// layoutOn is the layout checks of api on abi. The interpreter's own C
// compiler decides, through ctypes, both facts a model is made of; a
// platform matching none (m68k aligns int64 to 2) is not checked.
func layoutOn(api *ir.API, abi ir.ABI) layout {
	l := layout{ABI: abi.Name, PtrSize: abi.PtrSize, Int64Align: abi.Int64Align}
	for _, lc := range api.LayoutChecks(abi) {
		if lc.Field == nil {
			l.Checks = append(l.Checks, check{Struct: lc.Struct.Name, Want: lc.Size})
		} else {
			l.Checks = append(l.Checks, check{Struct: lc.Struct.Name, Field: lc.Field.Name, Want: lc.Offset})
		}
	}
	return l
}

// pythonEnum is an IntEnum. Its values lie in [0, 63]: the Cython module
// keeps the facts of device types and type codes in 64-bit masks.
func pythonEnum(d *ir.Enum) (enum, error) {
	e := enum{Name: d.Name, Doc: d.Doc}
	for _, ev := range d.Values {
		if ev.Value < 0 || ev.Value > 63 {
			return e, backend.Errorf(ev.Pos, "%s.%s = %d: the Python modules keep enum values in a 64-bit mask", d.Name, ev.Name, ev.Value)
		}
		e.Members = append(e.Members, constant{Name: ev.Name, Doc: ev.Doc, Value: fmt.Sprint(ev.Value)})
	}
	return e, nil
}

// rulesOf is the tables of a versioned release: everything a checker of
// docs/rules.md reads, and the flags by role.
func rulesOf(api *ir.API) (*rules, error) {
	r := &rules{Major: api.Versions.Major.Name, Minor: api.Versions.Minor.Name, MaxDims: api.Rules.MaxDims}
	flag := func(f *ir.Flag) string {
		if f == nil {
			return "0"
		}
		return f.Name
	}
	r.ReadOnly, r.IsCopied, r.SubbytePadded = flag(api.Flag.ReadOnly), flag(api.Flag.IsCopied), flag(api.Flag.SubbytePadded)
	codes, devices := api.Enum.DataTypeCode, api.Enum.DeviceType
	if codes == nil || devices == nil || len(api.Rules.Messages) == 0 || r.MaxDims == 0 {
		return nil, fmt.Errorf("DLPack %s: the Python modules need the rules (rules.max_ndim and rules.messages) and the enums of device types and type codes (roles device_type and dtype_code)", api.Version())
	}
	for _, s := range api.Structs() {
		for _, f := range s.Fields {
			n := f.Nullable
			if n.When == ir.NullNever {
				continue
			}
			nl := nullable{Field: s.Name + "." + f.Name, When: pystr(n.When.String()), Changed: "None", Before: "None"}
			if c := n.Changed; c != nil {
				nl.Changed, nl.Before = fmt.Sprintf("(%d, %d)", c.In.Major, c.In.Minor), pystr(c.From.String())
			}
			r.Nullables = append(r.Nullables, nl)
		}
	}
	for _, ev := range codes.Values {
		tc := typeCode{Value: ev.Value, Name: ev.Name, Opaque: ev.Opaque, Bits: ev.Bits, Float: ev.Float}
		r.TypeCodes = append(r.TypeCodes, tc)
		if tc.Float != nil {
			r.SmallFloats = append(r.SmallFloats, tc)
		}
	}
	for _, ev := range devices.Values {
		if ev.HostReadable {
			r.HostReadable = append(r.HostReadable, constant{Name: ev.Name, Value: fmt.Sprint(ev.Value)})
		}
		if ev.Streamless {
			r.Streamless = append(r.Streamless, constant{Name: ev.Name, Value: fmt.Sprint(ev.Value)})
		}
	}
	r.DataTypes = api.DataTypeNames()
	for _, msg := range api.Rules.Messages {
		r.Messages = append(r.Messages, message{ID: msg.Check.ID, Exception: msg.Python,
			Text: pieces(msg.Text, messageWidth), Params: msg.Check.Params})
	}
	return r, nil
}

// pieces splits text into Python string literals of at most width columns
// that concatenate to it, breaking after spaces.
func pieces(text string, width int) []string {
	var out []string
	for text != "" {
		cut := len(text)
		if len(pystr(text)) > width {
			cut = 0
			for i := 0; i < len(text); i++ {
				if text[i] == ' ' && len(pystr(text[:i+1])) <= width {
					cut = i + 1
				}
			}
			if cut == 0 { // a word longer than the line: as it is
				cut = len(text)
			}
		}
		out = append(out, pystr(text[:cut]))
		text = text[cut:]
	}
	return out
}

// declared lists the public names of the generated declarations of a
// module: the Cython module has no ctypes structs or function types.
func (m *view) declared(cython bool) []string {
	names := []string{"DLPACK_VERSION_STRING"}
	for _, c := range m.Constants {
		names = append(names, c.Name)
	}
	for _, e := range m.Enums {
		names = append(names, e.Name)
	}
	if !cython {
		for _, s := range m.Structs {
			names = append(names, s.Name)
		}
		for _, f := range m.FuncTypes {
			names = append(names, f.Name)
		}
	}
	for _, c := range m.Capsules {
		names = append(names, c.Name)
	}
	return names
}

// sortAll orders names as ruff's RUF022 wants __all__: CONSTANTS, then
// Classes, then the rest, each group sorted.
func sortAll(names []string) []string {
	class := func(s string) int {
		switch {
		case strings.ToUpper(s) == s:
			return 0
		case s[:1] == strings.ToUpper(s[:1]):
			return 1
		}
		return 2
	}
	names = append([]string(nil), names...)
	sort.SliceStable(names, func(i, j int) bool {
		if ci, cj := class(names[i]), class(names[j]); ci != cj {
			return ci < cj
		}
		return names[i] < names[j]
	})
	return names
}

// structCodes are the struct-module codes of the fixed-size scalars.
var structCodes = map[string]string{
	"char": "c", "int": "i",
	"int8_t": "b", "int16_t": "h", "int32_t": "i", "int64_t": "q",
	"uint8_t": "B", "uint16_t": "H", "uint32_t": "I", "uint64_t": "Q",
}

// leaves lists the scalar fields of s, nested structs flattened into dotted
// paths, in C order, each with its struct-module code.
func leaves(s *ir.Struct, prefix string) []leaf {
	var out []leaf
	for _, f := range s.Fields {
		t := f.Type
		switch {
		case t.Kind == ir.Pointer || t.Kind == ir.Func:
			out = append(out, leaf{prefix + f.Name, "P"})
		case t.Kind == ir.Scalar:
			out = append(out, leaf{prefix + f.Name, structCodes[t.Name]})
		default:
			switch d := t.Decl.(type) {
			case *ir.Struct:
				out = append(out, leaves(d, prefix+f.Name+".")...)
			case *ir.Enum:
				code := "I"
				if ir.Scalars[d.Storage].Signed {
					code = "i"
				}
				out = append(out, leaf{prefix + f.Name, code})
			default: // a function type
				out = append(out, leaf{prefix + f.Name, "P"})
			}
		}
	}
	return out
}
