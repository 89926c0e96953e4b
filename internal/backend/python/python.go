// Package python is dlgen's Python backend. It writes, under python/:
//   - dlpack_ctypes.py, one file that needs the standard library only: a
//     ctypes.Structure per struct, an IntEnum per enum, flag and version
//     constants, the capsule names, an import-time layout check, and (DLPack
//     1.0 and later) the DLPack protocol in pure ctypes;
//   - from DLPack 1.0, dlpack_cython.pyx, the same API, fast, with the
//     buffer protocol and the C exchange API; dlpack.pxd, the header's
//     declarations for Cython; dlpack_cython.pxd, the module's Cython API for
//     other extension modules; the .pxi files these two include; the driver
//     places the C header the .pyx includes at python/dlpack/dlpack.h;
//   - .pyi stubs for both modules;
//   - with Backend.Package set (dlgen -python-package), __init__.py: the
//     directory is then that package, vendored inside another one, and the
//     Cython files cimport their own declarations relatively (`from . cimport
//     dlpack`), so that nothing in them claims a top-level name; and the
//     __init__.py of the output directory, the package around python/,
//     where it has none (a seed: one already there is the user's), so that
//     Cython names the module after its full name.
//
// # What is generated and what is written by hand
//
// Only what varies by release is generated: the declarations, rendered from
// the IR through templates/dlpack*.tmpl. The view the templates render is
// built in view.go; every decision is made there, and the templates only
// spell it. Types are spelled by two namers: ctype (ctypes.go) and
// declarator (cython.go).
//
// Everything else is hand-written and the same for every release: the
// sources in internal/backend/python/runtime, which linters, editors and tests read as they are.
// They reach the output in one of two ways, one per kind of text:
//   - Python (the ctypes module and both stubs): a generated file is its
//     template's declarations followed by hand-written sources, verbatim
//     but for their import lines, which join the file's import block
//     (sources.go says how a source is laid out). The ctypes module thus
//     stays one file a vendor can drop in. ctypes.go lists its sources.
//   - Cython: dlpack_cython.pyx and dlpack_cython.pxd end with `include`s
//     of hand-written .pxi files, which dlgen ships beside them, unchanged
//     behind the marker lines. cython.go lists them.
//
// The names that cross between the two (the declarations a source reads,
// the public names a source defines for __all__ and the stubs) are listed
// in handover.go, the one place to look them up; a test keeps that table
// true. The per-release tables the hand-written checks read are among
// them: a new one (the import rules of docs/rules.md, say) is data in the
// view, rendered in the "tables" block of dlpack_declarations.py.tmpl (and
// as a C value in dlpack_cython.pyx.tmpl where Cython code needs one),
// listed in handover.go, and read by shared.py.
//
// What a release has is decided by roles, never by its number or a
// spelling: the versioned protocol (ir.API.Versioned), the exchange API
// (ir.Protocol), the padded flag (ir.FlagsByRole), the enums of device
// types and type codes (ir.EnumsByRole).
package python

import (
	"bytes"
	"embed"
	"fmt"
	"strings"
	"text/template"

	"github.com/dlgen/dlgen/internal/backend"
	"github.com/dlgen/dlgen/internal/ir"
)

// templates are the backend's templates, declarations only.
//
//go:embed templates/*.tmpl
var templates embed.FS

// Dir is where the modules are written, relative to the output directory.
const Dir = "python"

// HeaderPath is where the C header the Cython module includes goes.
const HeaderPath = Dir + "/dlpack/dlpack.h"

// Backend is the Python backend.
type Backend struct {
	Schema string // names the schema in the modules' docstrings
	// Package is the dotted name python/ has inside the package that
	// vendors it ("mylib._vendor.python"), or "" for top-level modules.
	Package string
}

// CheckPackage says whether name can be Backend.Package: dotted Python
// identifiers, the last of them python, the directory dlgen writes.
func CheckPackage(name string) error {
	parts := strings.Split(name, ".")
	for _, p := range parts {
		if !identifier(p) {
			return fmt.Errorf("-python-package %q is not a dotted Python name", name)
		}
	}
	if parts[len(parts)-1] != Dir {
		return fmt.Errorf("-python-package %q must end in .%s: it names the %s/ directory dlgen writes (-out yourpkg/_vendor -python-package yourpkg._vendor.%s)", name, Dir, Dir, Dir)
	}
	return nil
}

func identifier(s string) bool {
	for i, r := range s {
		letter := r == '_' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z')
		if !letter && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return s != "" && !ir.Keyword("Python", s)
}

// Name is "python", the value of -lang that selects the Python backend.
func (Backend) Name() string { return "python" }

// PackageFlag is the flag that sets Backend.Package.
const PackageFlag = "python-package"

func init() {
	backend.Register(backend.Registration{
		Name: "python",
		Options: []backend.Option{{
			Flag: PackageFlag, Arg: "NAME", Check: CheckPackage,
			Usage: "vendor the Python modules as the package `NAME` (yourpkg._vendor.python, with -out yourpkg/_vendor): relative cimports, an __init__.py, no top-level names",
		}},
		New: func(c backend.Config) backend.Backend {
			return Backend{Schema: c.Schema, Package: c.Options[PackageFlag]}
		},
		Reference: Dir + "/dlpack_ctypes.py",
		Reserved:  reserved,
	})
}

// Header says where the driver must place the C header: beside the Cython
// module, which versioned releases have.
func (Backend) Header(api *ir.API) string {
	if !api.Versioned() {
		return ""
	}
	return HeaderPath
}

// file is one generated file: its template and what it renders.
type file struct {
	path, template string
	page           page
}

// page is what one template renders: the release's view and what is
// particular to the file.
type page struct {
	*view
	Cython   bool     // a file of the Cython module
	All      []string // the module's __all__
	Imports  []string // the modules of a Python file's import block
	Sources  []string // the hand-written sources that follow a Python file's declarations
	Includes []string // the hand-written files a Cython file includes
}

// Generate renders the modules of api and their stubs.
func (b Backend) Generate(api *ir.API) ([]backend.File, error) {
	if b.Package != "" {
		if err := CheckPackage(b.Package); err != nil {
			return nil, err
		}
	}
	v, err := b.view(api)
	if err != nil {
		return nil, err
	}
	pages, err := ctypesFiles(v)
	if err != nil {
		return nil, err
	}
	var copies []backend.File
	if v.Versioned {
		cython, shipped, err := cythonFiles(v)
		if err != nil {
			return nil, err
		}
		pages, copies = append(pages, cython...), shipped
	}
	if b.Package != "" {
		pages = append(pages, file{path: "__init__.py", template: "templates/package_init.py.tmpl", page: page{view: v}})
	}
	var out []backend.File
	for _, f := range pages {
		content, err := f.render()
		if err != nil {
			return nil, err
		}
		out = append(out, backend.File{Path: Dir + "/" + f.path, Content: content})
	}
	if strings.Contains(b.Package, ".") {
		// The package around python/, the output directory, may have an
		// __init__.py of its own already: a seed. (-python-package python
		// makes python/ a top-level package, with none around it.)
		content, err := file{template: "templates/parent_init.py.tmpl", page: page{view: v}}.render()
		if err != nil {
			return nil, err
		}
		out = append(out, backend.File{Path: "__init__.py", Content: content, Seed: true})
	}
	out = append(out, copies...)
	stampFingerprint(v.Version, out)
	return out, nil
}

// declarationsTemplate holds the blocks both modules render alike.
const declarationsTemplate = "templates/dlpack_declarations.py.tmpl"

func (f file) render() ([]byte, error) {
	tmpl, err := backend.ParseTemplate(templates, f.template, template.FuncMap{"comment": comment, "docstring": docstring, "pystr": pystr,
		"pkgpath": func(pkg string) string { return strings.ReplaceAll(pkg, ".", "/") },
		"parent":  func(pkg string) string { return pkg[:strings.LastIndex(pkg, ".")] }}, declarationsTemplate)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, f.page); err != nil {
		return nil, fmt.Errorf("%s: %w", f.path, err)
	}
	return buf.Bytes(), nil
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

// docstring renders doc as a triple-quoted docstring at indent, wrapped.
func docstring(indent, doc string) string {
	lines := backend.Wrap(strings.ReplaceAll(doc, `"""`, `'''`), 78-len(indent))
	if len(lines) <= 1 {
		return indent + `"""` + strings.Join(lines, "") + `"""`
	}
	return indent + `"""` + strings.Join(lines, "\n"+indent) + "\n" + indent + `"""`
}

// pystr quotes s as a Python string literal.
func pystr(s string) string { return fmt.Sprintf("%q", s) }
