package python

import (
	"strings"

	"github.com/dlgen/dlgen/internal/backend"
	"github.com/dlgen/dlgen/internal/ir"
)

// The Cython module of a versioned release:
//   - dlpack.pxd, the header's declarations for Cython (a template);
//   - dlpack_cython.pyx: the declarations (a template), then `include`s of
//     the hand-written part, shipped beside it: the import rules and the
//     rest of the shared protocol (both Python, which Cython compiles), the
//     Tensor, the exchange API (or its absence), the producer API, and
//     the check that it was built from the sources beside it
//     (fingerprint.go), and of the name it was built under;
//   - dlpack_cython.pxd, its Cython API for other extension modules: a
//     template that cimports the header's structs and includes the
//     hand-written declarations;
//   - dlpack_cython.pyi, its stub, made as the ctypes module's is.
//
// Cython reads an included file in the including one's place, and looks
// for it beside that file first, so a vendored copy finds its own.

// pyxIncludes are the hand-written sources dlpack_cython.pyx includes, in
// order; exchange says whether the release has the C exchange API.
func pyxIncludes(exchange bool) []string {
	api := "cython_no_exchange_api.pxi"
	if exchange {
		api = "cython_exchange_api.pxi"
	}
	return []string{"rules.py", "shared.py", "cython_tensor.pxi", api, "cython_producer.pxi", "cython_fingerprint.pxi", "name_check.py", "cython_module_name.pxi"}
}

// pxdIncludes are the hand-written sources dlpack_cython.pxd includes.
var pxdIncludes = []string{"cython_api.pxi"}

// shipped is the name a hand-written source has beside the .pyx:
// shared.py is dlpack_cython_shared.pxi, cython_tensor.pxi
// dlpack_cython_tensor.pxi.
func shipped(source string) string {
	base := strings.TrimSuffix(strings.TrimSuffix(source, ".py"), ".pxi")
	return "dlpack_cython_" + strings.TrimPrefix(base, "cython_") + ".pxi"
}

// cythonFiles are the Cython module's generated files and the hand-written
// ones shipped beside them.
func cythonFiles(v *view) ([]file, []backend.File, error) {
	stub, err := pythonPage(v, true, []string{"enum", "typing"}, []string{"shared.pyi", "cython_tensor.pyi"})
	if err != nil {
		return nil, nil, err
	}
	pyx := page{view: v, Cython: true, All: sortAll(append(v.declared(true), v.public(true)...))}
	pxd := page{view: v, Cython: true}
	var copies []backend.File
	for _, inc := range []struct {
		page    *page
		sources []string
	}{{&pyx, pyxIncludes(v.Exchange != nil)}, {&pxd, pxdIncludes}} {
		for _, src := range inc.sources {
			text, err := readCython(src)
			if err != nil {
				return nil, nil, err
			}
			inc.page.Includes = append(inc.page.Includes, shipped(src))
			copies = append(copies, backend.File{Path: Dir + "/" + shipped(src), Content: []byte(text)})
		}
	}
	return []file{
		{path: "dlpack.pxd", template: "templates/dlpack.pxd.tmpl", page: page{view: v, Cython: true}},
		{path: "dlpack_cython.pxd", template: "templates/dlpack_cython.pxd.tmpl", page: pxd},
		{path: "dlpack_cython.pyx", template: "templates/dlpack_cython.pyx.tmpl", page: pyx},
		{path: "dlpack_cython.pyi", template: "templates/dlpack.pyi.tmpl", page: stub},
	}, copies, nil
}

// cDecl is d as dlpack.pxd declares it in a "cdef extern from" block.
func cDecl(d ir.Decl, v ir.Version) cdecl {
	switch d := d.(type) {
	case *ir.Struct:
		c := cdecl{Kind: "struct", Name: d.Name, Doc: d.Doc, Typedef: d.Typedef(v)}
		for _, f := range d.Fields {
			c.Members = append(c.Members, declarator(f.Type, f.Name))
		}
		return c
	case *ir.Enum:
		c := cdecl{Kind: "enum", Name: d.Name, Doc: d.Doc}
		for _, e := range d.Values {
			c.Members = append(c.Members, e.Name)
		}
		return c
	case *ir.FuncType:
		return cdecl{Kind: "functype", Name: d.Name, Doc: d.Doc, Decl: declarator(&ir.Type{Kind: ir.Func, Sig: d.Sig}, d.Name)}
	case *ir.Flags: // its bits are among the integer constants
		return cdecl{Kind: "flags", Name: d.Name, Doc: d.Doc}
	}
	return cdecl{}
}

// declarator spells t around name for Cython: the namer of the Cython
// declarations. It is C's spelling without struct tags, function pointers
// marked noexcept nogil so that deleters can be called and implemented
// without the GIL.
func declarator(t *ir.Type, name string) string {
	switch t.Kind {
	case ir.Func:
		params := make([]string, len(t.Sig.Params))
		for i, p := range t.Sig.Params {
			params[i] = declarator(p.Type, p.Name)
		}
		return declarator(t.Sig.Returns, "") + " (*" + name + ")(" + strings.Join(params, ", ") + ") noexcept nogil"
	case ir.Pointer:
		return strings.TrimSpace(declarator(t.Elem, "") + "* " + name)
	}
	s := t.Name
	if t.Const {
		s = "const " + s
	}
	return strings.TrimSpace(s + " " + name)
}
