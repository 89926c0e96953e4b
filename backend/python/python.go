// Package python is dlgen's Python backend. It writes, under python/:
//   - dlpack_ctypes.py, standard library only: a ctypes.Structure per
//     struct, an IntEnum per enum, flag and version constants, the capsule
//     names, an import-time layout check, and the DLPack protocol itself
//     (from_dlpack, Tensor, __dlpack__) in pure ctypes;
//   - dlpack_cython.pxd (declarations to cimport), dlpack_cython.pyx (the
//     same API, fast, with the buffer protocol and the C exchange API) and
//     dlpack/dlpack.h, which the .pyx includes (DLPack >= 1.0 only);
//   - .pyi stubs for both modules.
package python

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/dlgen/dlgen/backend"
	"github.com/dlgen/dlgen/backend/c"
	"github.com/dlgen/dlgen/ir"
	"github.com/dlgen/dlgen/templates"
)

// Dir is where the module is written, relative to the output directory.
const Dir = "python"

// Backend is the Python backend.
type Backend struct {
	Schema string
}

func (Backend) Name() string { return "python" }

// Generate renders the ctypes module of api and its stub.
func (b Backend) Generate(api *ir.API) ([]backend.File, error) {
	m, err := b.module(api)
	if err != nil {
		return nil, err
	}
	var files []backend.File
	render := func(out, tmplName string, cython bool) error {
		tmpl, err := templates.Parse(tmplName, map[string]any{"comment": comment, "pystr": pystr})
		if err != nil {
			return err
		}
		view := *m
		view.Cython = cython
		var buf bytes.Buffer
		if err := tmpl.Execute(&buf, &view); err != nil {
			return fmt.Errorf("python backend: %w", err)
		}
		files = append(files, backend.File{Path: Dir + "/" + out, Content: buf.Bytes()})
		return nil
	}
	if err := render("dlpack_ctypes.py", "dlpack_ctypes.py.tmpl", false); err != nil {
		return nil, err
	}
	if err := render("dlpack_ctypes.pyi", "dlpack.pyi.tmpl", false); err != nil {
		return nil, err
	}
	if m.Major == 0 {
		return files, nil // the Cython module needs DLPack >= 1.0
	}
	for _, f := range [][2]string{
		{"dlpack_cython.pxd", "dlpack_cython.pxd.tmpl"},
		{"dlpack_cython.pyx", "dlpack_cython.pyx.tmpl"},
		{"dlpack_cython.pyi", "dlpack.pyi.tmpl"},
	} {
		if err := render(f[0], f[1], true); err != nil {
			return nil, err
		}
	}
	// The header the .pyx includes, beside it.
	header, err := c.Backend{Schema: b.Schema}.Generate(api)
	if err != nil {
		return nil, err
	}
	files = append(files, backend.File{Path: Dir + "/dlpack/dlpack.h", Content: header[0].Content})
	return files, nil
}

// module is the view the templates render.
type module struct {
	Marker, License, Version, Schema string
	Major, Minor                     int
	Constants                        []constant
	Enums                            []enum
	Structs                          []structure
	FuncTypes                        []functype
	Capsules                         map[string]string // protocol name -> spelling
	ExchangeAttr                     string            // the type attribute of the exchange API, from v1.2
	ExchangeCapsule                  string            // its capsule name, from v1.3 (before: an integer address)
	Layouts                          []layout
	CythonDecls                      []string // the body of the .pxd's extern block
	Cython                           bool     // rendering the Cython module's files
}

type constant struct {
	Name, Doc string
	Value     int64
	Flag      bool
}

type enum struct {
	Name, Doc string
	Members   []constant
}

type structure struct {
	Name, Doc string
	Fields    []field
}

type field struct{ Name, Type, Doc string }

type functype struct{ Name, Doc, Type string }

type layout struct {
	ABI, Condition string
	Checks         []check
}

type check struct {
	Struct, Field string // Field is "" for the size
	Want          int
}

func (b Backend) module(api *ir.API) (*module, error) {
	v := api.Version()
	m := &module{Marker: backend.Marker, License: backend.SPDX, Version: v.String(), Schema: b.Schema, Capsules: map[string]string{}}
	if vm := api.Versions; vm.Major != nil {
		m.Major, m.Minor = int(vm.Major.Value), int(vm.Minor.Value)
	}
	for _, mac := range api.Macros {
		if mac.Kind == ir.MacroInteger {
			m.Constants = append(m.Constants, constant{Name: mac.Name, Doc: mac.Doc, Value: mac.Value})
		}
	}
	pr := api.Protocol
	for key, p := range map[string]*ir.PythonName{
		"dltensor": pr.Capsule, "used_dltensor": pr.UsedCapsule,
		"dltensor_versioned": pr.VersionedCapsule, "used_dltensor_versioned": pr.UsedVersionedCapsule,
	} {
		if p != nil {
			m.Capsules[key] = p.Name
		}
	}
	if pr.ExchangeAPIAttribute != nil {
		m.ExchangeAttr = pr.ExchangeAPIAttribute.Name
	}
	if pr.ExchangeAPICapsule != nil {
		m.ExchangeCapsule = pr.ExchangeAPICapsule.Name
	}
	for _, d := range api.Decls {
		switch d := d.(type) {
		case *ir.Enum:
			e := enum{Name: d.Name, Doc: d.Doc}
			for _, ev := range d.Values {
				e.Members = append(e.Members, constant{Name: ev.Name, Doc: ev.Doc, Value: ev.Value})
			}
			m.Enums = append(m.Enums, e)
		case *ir.Flags:
			for _, f := range d.Bits {
				m.Constants = append(m.Constants, constant{Name: f.Name, Doc: f.Doc, Value: 1 << f.Bit, Flag: true})
			}
		case *ir.Struct:
			s := structure{Name: d.Name, Doc: d.Doc}
			for _, f := range d.Fields {
				t, err := ctype(f.Type)
				if err != nil {
					return nil, fmt.Errorf("%s.%s: %w", d.Name, f.Name, err)
				}
				s.Fields = append(s.Fields, field{Name: f.Name, Type: t, Doc: f.Doc})
			}
			m.Structs = append(m.Structs, s)
		case *ir.FuncType:
			t, err := ctype(&ir.Type{Kind: ir.Func, Sig: d.Sig})
			if err != nil {
				return nil, fmt.Errorf("%s: %w", d.Name, err)
			}
			m.FuncTypes = append(m.FuncTypes, functype{Name: d.Name, Doc: d.Doc, Type: t})
		}
		m.CythonDecls = append(m.CythonDecls, cythonDecl(d, api.Version()))
	}
	for _, abi := range ir.ABIs {
		// The interpreter's own C compiler decides, through ctypes, both
		// facts a model is made of; a platform matching none (m68k aligns
		// int64 to 2) is not checked.
		l := layout{ABI: abi.Name, Condition: fmt.Sprintf("_POINTER_SIZE == %d and ctypes.alignment(ctypes.c_int64) == %d", abi.PtrSize, abi.Int64Align)}
		for _, s := range api.Structs() {
			sl := abi.Layout(s)
			l.Checks = append(l.Checks, check{Struct: s.Name, Want: sl.Size})
			for _, f := range sl.Fields {
				l.Checks = append(l.Checks, check{Struct: s.Name, Field: f.Name, Want: f.Offset})
			}
		}
		m.Layouts = append(m.Layouts, l)
	}
	return m, nil
}

var ctypesScalar = map[string]string{
	"char": "ctypes.c_char", "int": "ctypes.c_int",
	"int8_t": "ctypes.c_int8", "int16_t": "ctypes.c_int16", "int32_t": "ctypes.c_int32", "int64_t": "ctypes.c_int64",
	"uint8_t": "ctypes.c_uint8", "uint16_t": "ctypes.c_uint16", "uint32_t": "ctypes.c_uint32", "uint64_t": "ctypes.c_uint64",
}

// ctype returns the ctypes expression for t.
func ctype(t *ir.Type) (string, error) {
	switch t.Kind {
	case ir.Scalar:
		if t.Name == "void" {
			return "None", nil
		}
		return ctypesScalar[t.Name], nil
	case ir.Pointer:
		e := t.Elem
		switch {
		case e.Kind == ir.Scalar && e.Name == "void":
			return "ctypes.c_void_p", nil
		case e.Kind == ir.Scalar && e.Name == "char":
			return "ctypes.c_char_p", nil
		}
		inner, err := ctype(e)
		if err != nil {
			return "", err
		}
		return "ctypes.POINTER(" + inner + ")", nil
	case ir.Func:
		parts := []string{}
		ret, err := ctype(t.Sig.Returns)
		if err != nil {
			return "", err
		}
		parts = append(parts, ret)
		for _, p := range t.Sig.Params {
			pt, err := ctype(p.Type)
			if err != nil {
				return "", err
			}
			parts = append(parts, pt)
		}
		return "ctypes.CFUNCTYPE(" + strings.Join(parts, ", ") + ")", nil
	}
	switch d := t.Decl.(type) {
	case *ir.Enum:
		if ir.Scalars[d.Underlying].Signed {
			return "ctypes.c_int32", nil // C stores enums as int
		}
		return "ctypes.c_uint32", nil
	case *ir.Struct, *ir.FuncType:
		return t.Name, nil
	}
	return "", fmt.Errorf("no ctypes type for %s", t.Name)
}

// comment renders doc as # lines at indent.
func comment(indent, doc string) string {
	var b strings.Builder
	for i, l := range backend.Wrap(doc, 78-len(indent)) {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(indent + "# " + l)
	}
	return b.String()
}

// pystr quotes s as a Python string literal.
func pystr(s string) string { return fmt.Sprintf("%q", s) }

// cythonDecl renders a declaration for a "cdef extern from" block.
func cythonDecl(d ir.Decl, v ir.Version) string {
	var b strings.Builder
	switch d := d.(type) {
	case *ir.Struct:
		kind := "ctypedef struct" // "struct" where the header declares only the tag
		if !d.Typedef(v) {
			kind = "struct"
		}
		fmt.Fprintf(&b, "    %s %s:\n", kind, d.Name)
		for _, f := range d.Fields {
			fmt.Fprintf(&b, "        %s\n", cythonType(f.Type, f.Name))
		}
	case *ir.Enum:
		fmt.Fprintf(&b, "    ctypedef enum %s:\n", d.Name)
		for _, e := range d.Values {
			fmt.Fprintf(&b, "        %s\n", e.Name)
		}
	case *ir.Flags:
		return "    # " + d.Doc
	case *ir.FuncType:
		fmt.Fprintf(&b, "    ctypedef %s\n", cythonType(&ir.Type{Kind: ir.Func, Sig: d.Sig}, d.Name))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// cythonType spells t for Cython around a declarator: C's spelling without
// struct tags, function pointers marked noexcept nogil so that deleters
// can be called and implemented without the GIL.
func cythonType(t *ir.Type, name string) string {
	switch t.Kind {
	case ir.Func:
		params := make([]string, len(t.Sig.Params))
		for i, p := range t.Sig.Params {
			params[i] = cythonType(p.Type, p.Name)
		}
		return cythonType(t.Sig.Returns, "") + " (*" + name + ")(" + strings.Join(params, ", ") + ") noexcept nogil"
	case ir.Pointer:
		inner := cythonType(t.Elem, "")
		return strings.TrimSpace(inner + "* " + name)
	}
	s := t.Name
	if t.Const {
		s = "const " + s
	}
	return strings.TrimSpace(s + " " + name)
}
