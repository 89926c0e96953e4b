package python

import (
	"fmt"

	"github.com/dlgen/dlgen/internal/ir"
)

// ctypesFiles are the ctypes module, one self-contained file that needs the
// standard library only, and its stub: each is its template's declarations
// followed by hand-written sources (the layout check in every release; the
// import rules, the shared protocol and the module's own, or the API's
// stubs, in versioned releases).
func ctypesFiles(v *view) ([]file, error) {
	modules, stubs := []string{"ctypes_layout.py"}, []string(nil)
	if v.Versioned {
		modules = append(modules, "rules.py", "shared.py", "ctypes_protocol.py")
		stubs = []string{"shared.pyi", "ctypes_tensor.pyi"}
	}
	modules = append(modules, "name_check.py", "ctypes_module_name.py") // last: the name it is imported under
	module, err := pythonPage(v, false, []string{"ctypes", "enum"}, modules)
	if err != nil {
		return nil, err
	}
	stub, err := pythonPage(v, false, []string{"ctypes", "enum", "typing"}, stubs)
	if err != nil {
		return nil, err
	}
	return []file{
		{path: "dlpack_ctypes.py", template: "templates/dlpack_ctypes.py.tmpl", page: module},
		{path: "dlpack_ctypes.pyi", template: "templates/dlpack.pyi.tmpl", page: stub},
	}, nil
}

// pythonPage is a Python module or stub of v: its declarations need the
// modules own, and the hand-written sources names follow them.
func pythonPage(v *view, cython bool, own []string, names []string) (page, error) {
	p := page{view: v, Cython: cython, All: sortAll(append(v.declared(cython), v.public(cython)...))}
	var srcs []pythonSource
	for _, name := range names {
		src, err := readPython(name)
		if err != nil {
			return p, err
		}
		srcs = append(srcs, src)
		p.Sources = append(p.Sources, src.text)
	}
	p.Imports = importBlock(own, srcs)
	return p, nil
}

var ctypesScalar = map[string]string{
	"char": "ctypes.c_char", "int": "ctypes.c_int",
	"int8_t": "ctypes.c_int8", "int16_t": "ctypes.c_int16", "int32_t": "ctypes.c_int32", "int64_t": "ctypes.c_int64",
	"uint8_t": "ctypes.c_uint8", "uint16_t": "ctypes.c_uint16", "uint32_t": "ctypes.c_uint32", "uint64_t": "ctypes.c_uint64",
}

// ctype spells t in ctypes: the namer of the ctypes module's types.
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
		ret, err := ctype(t.Sig.Returns)
		if err != nil {
			return "", err
		}
		spelled := "ctypes.CFUNCTYPE(" + ret
		for _, p := range t.Sig.Params {
			pt, err := ctype(p.Type)
			if err != nil {
				return "", err
			}
			spelled += ", " + pt
		}
		return spelled + ")", nil
	}
	switch d := t.Decl.(type) {
	case *ir.Enum:
		if ir.Scalars[d.Storage].Signed {
			return "ctypes.c_int32", nil // C stores enums as int
		}
		return "ctypes.c_uint32", nil
	case *ir.Struct, *ir.FuncType:
		return t.Name, nil
	}
	return "", fmt.Errorf("no ctypes type for %s", t.Name)
}
