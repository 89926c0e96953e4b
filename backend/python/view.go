package python

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dlgen/dlgen/backend"
	"github.com/dlgen/dlgen/ir"
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

	// Tables the hand-written sources read (see handover.go). Phase 2 of
	// the rules as data adds the import rules here (ir.Rules, the facts on
	// enumerators and fields: docs/rules.md), rendered in the "tables"
	// block of dlpack_declarations.py.tmpl for both modules.
	SubbytePadded string    // the padded-sub-byte flag by role; "" where sub-byte elements are always packed
	DeviceTypes   *enum     // the enum of device types (role device_type), as a mask for Cython
	DataTypeCodes *enum     // the enum of type codes (role dtype_code), as a mask for Cython
	Exchange      *exchange // the C exchange API's names; nil before DLPack 1.2
}

type constant struct{ Name, Doc, Value string }

type enum struct {
	Name, Doc string
	Members   []constant
	Mask      string // the values as a bit mask, bit v for value v
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
		Schema: b.Schema, Package: b.Package, Versioned: api.Versioned()}
	for _, mac := range api.Macros {
		if mac.Kind == ir.MacroInteger {
			m.Constants = append(m.Constants, constant{Name: mac.Name, Doc: mac.Doc, Value: fmt.Sprint(mac.Value)})
		}
	}
	pr := api.Protocol
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
	if f := api.Flag.SubbytePadded; f != nil {
		m.SubbytePadded = f.Name
	}
	for _, d := range api.Decls {
		switch d := d.(type) {
		case *ir.Enum:
			e, err := pythonEnum(d)
			if err != nil {
				return nil, err
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
					return nil, backend.Errorf(f.Pos, "%s.%s: %v", d.Name, f.Name, err)
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
				return nil, backend.Errorf(d.Pos, "%s: %v", d.Name, err)
			}
			for _, p := range d.Sig.Params {
				t, err := ctype(p.Type)
				if err != nil {
					return nil, backend.Errorf(d.Pos, "%s: %v", d.Name, err)
				}
				ft.Params = append(ft.Params, t)
			}
			m.FuncTypes = append(m.FuncTypes, ft)
		}
		m.CDecls = append(m.CDecls, cDecl(d, v))
		switch d.(type) {
		case *ir.Struct, *ir.FuncType:
			m.Cimports = append(m.Cimports, d.DeclName())
		}
	}
	sort.Strings(m.Cimports)
	m.DeviceTypes, m.DataTypeCodes = m.enum(api.Enum.DeviceType), m.enum(api.Enum.DataTypeCode)
	for _, abi := range ir.ABIs {
		// The interpreter's own C compiler decides, through ctypes, both
		// facts a model is made of; a platform matching none (m68k aligns
		// int64 to 2) is not checked.
		l := layout{ABI: abi.Name, PtrSize: abi.PtrSize, Int64Align: abi.Int64Align}
		for _, lc := range api.LayoutChecks(abi) {
			if lc.Field == nil {
				l.Checks = append(l.Checks, check{Struct: lc.Struct.Name, Want: lc.Size})
			} else {
				l.Checks = append(l.Checks, check{Struct: lc.Struct.Name, Field: lc.Field.Name, Want: lc.Offset})
			}
		}
		m.Layouts = append(m.Layouts, l)
	}
	return m, nil
}

// pythonEnum is an IntEnum, and its values as a bit mask.
func pythonEnum(d *ir.Enum) (enum, error) {
	e := enum{Name: d.Name, Doc: d.Doc}
	var mask uint64
	for _, ev := range d.Values {
		if ev.Value < 0 || ev.Value > 63 {
			return e, backend.Errorf(ev.Pos, "%s.%s = %d: the Python modules keep enum values in a 64-bit mask", d.Name, ev.Name, ev.Value)
		}
		mask |= 1 << ev.Value
		e.Members = append(e.Members, constant{Name: ev.Name, Doc: ev.Doc, Value: fmt.Sprint(ev.Value)})
	}
	e.Mask = fmt.Sprintf("0x%x", mask)
	return e, nil
}

// enum is the view of e, nil for none.
func (m *view) enum(e *ir.Enum) *enum {
	for i := range m.Enums {
		if e != nil && m.Enums[i].Name == e.Name {
			return &m.Enums[i]
		}
	}
	return nil
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
