// Package python is dlgen's Python backend. It writes, under python/:
//   - dlpack_ctypes.py, standard library only: a ctypes.Structure per
//     struct, an IntEnum per enum, flag and version constants, the capsule
//     names, an import-time layout check, and (DLPack >= 1.0) the DLPack
//     protocol itself (from_dlpack, Tensor, __dlpack__) in pure ctypes;
//   - dlpack_cython.pyx (DLPack >= 1.0): the same API, fast, with the buffer
//     protocol and the C exchange API, and dlpack.pxd, the header's
//     declarations for Cython (`from dlpack cimport DLTensor`); the driver
//     places the C header the .pyx includes at python/dlpack/dlpack.h;
//   - .pyi stubs for both modules;
//   - with Backend.Package set (dlgen -python-package), __init__.py: the
//     directory is then that package, vendored inside another one, and the
//     modules cimport their own declarations relatively (`from . cimport
//     dlpack`), so that nothing in them claims a top-level name.
//
// Only what varies by release is generated: the declarations, rendered from
// the IR through templates/. The protocol is hand-written Python and Cython
// in protocol/, embedded here and copied into the modules after the
// declarations: layout.py (the ctypes module's import-time layout check),
// protocol.py (the rules both modules share), dlpack_ctypes.py,
// dlpack_cython.pxi, and exchange_api.pxi or no_exchange_api.pxi. The import
// lines at the top of each of those files join the module's import block;
// everything after them is copied verbatim.
package python

import (
	"bytes"
	"embed"
	"fmt"
	"sort"
	"strings"

	"github.com/dlgen/dlgen/backend"
	"github.com/dlgen/dlgen/ir"
	"github.com/dlgen/dlgen/templates"
)

// Dir is where the modules are written, relative to the output directory.
const Dir = "python"

// HeaderPath is where the C header the Cython module includes goes.
const HeaderPath = Dir + "/dlpack/dlpack.h"

//go:embed protocol/*.py protocol/*.pxi protocol/*.pxd
var protocol embed.FS

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
	return s != "" && !keywords[s]
}

// keywords are Python's reserved words, which cannot name a package.
var keywords = map[string]bool{}

func init() {
	for _, k := range strings.Fields("False None True and as assert async await break class continue def del elif " +
		"else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield") {
		keywords[k] = true
	}
}

// Name is "python", the value of -lang that selects the Python backend.
func (Backend) Name() string { return "python" }

// Header says where the driver must place the C header: beside the Cython
// module, which exists from DLPack 1.0.
func (Backend) Header(api *ir.API) string {
	if !api.Versioned() {
		return ""
	}
	return HeaderPath
}

// output is one generated file: a template of declarations, the import
// lines those declarations need, and the hand-written sources that follow.
type output struct {
	path, template string
	imports        []string
	sources        []string
	cython         bool
}

// Generate renders the modules of api and their stubs.
func (b Backend) Generate(api *ir.API) ([]backend.File, error) {
	m, err := b.module(api)
	if err != nil {
		return nil, err
	}
	outputs := []output{
		{path: "dlpack_ctypes.py", template: "dlpack_ctypes.py.tmpl",
			imports: []string{"import ctypes", "import enum"}},
		{path: "dlpack_ctypes.pyi", template: "dlpack.pyi.tmpl"},
	}
	outputs[0].sources = []string{"layout.py"}
	if api.Versioned() {
		outputs[0].sources = append(outputs[0].sources, "protocol.py", "producer.py", "dlpack_ctypes.py")
		exchange := "no_exchange_api.pxi"
		if m.ExchangeAttr != "" {
			exchange = "exchange_api.pxi"
		}
		outputs = append(outputs,
			output{path: "dlpack.pxd", template: "dlpack.pxd.tmpl", cython: true},
			output{path: "dlpack_cython.pxd", template: "dlpack_cython.pxd.tmpl", cython: true,
				sources: []string{"dlpack_cython.pxd"}},
			output{path: "dlpack_cython.pyx", template: "dlpack_cython.pyx.tmpl", cython: true,
				imports: []string{"cimport dlpack", "import enum"},
				sources: []string{"protocol.py", "producer.py", "dlpack_cython.pxi", exchange, "producer.pxi"}},
			output{path: "dlpack_cython.pyi", template: "dlpack.pyi.tmpl", cython: true},
		)
	}
	if b.Package != "" {
		if err := CheckPackage(b.Package); err != nil {
			return nil, err
		}
		outputs = append(outputs, output{path: "__init__.py", template: "package_init.py.tmpl"})
	}
	var files []backend.File
	for _, o := range outputs {
		content, err := b.render(m, o)
		if err != nil {
			return nil, err
		}
		files = append(files, backend.File{Path: Dir + "/" + o.path, Content: content})
	}
	return files, nil
}

func (b Backend) render(m *module, o output) ([]byte, error) {
	view := *m
	view.Cython = o.cython
	var imports []string
	for _, stmt := range o.imports {
		imports = append(imports, b.ownCimport(stmt))
	}
	var body strings.Builder
	for _, name := range o.sources {
		text, err := protocol.ReadFile("protocol/" + name)
		if err != nil {
			return nil, err
		}
		imp, rest := splitSource(string(text))
		for _, stmt := range imp {
			imports = append(imports, b.ownCimport(stmt))
		}
		body.WriteString("\n\n" + rest)
	}
	view.Imports = importBlock(imports)
	view.All = m.declared(o.cython)
	if strings.HasSuffix(o.path, ".pyi") && m.Major > 0 {
		view.All = append(view.All, protocolNames...)
		if o.cython {
			view.All = append(view.All, "to_type")
		}
	}
	view.Body = strings.TrimRight(body.String(), "\n")
	tmpl, err := templates.Parse(o.template, map[string]any{"comment": comment, "docstring": docstring, "pystr": pystr, "pylist": pylist,
		"pkgpath": func(pkg string) string { return strings.ReplaceAll(pkg, ".", "/") }})
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, &view); err != nil {
		return nil, fmt.Errorf("%s: %w", o.path, err)
	}
	return buf.Bytes(), nil
}

// ownCimport spells a cimport of the module's own declarations (dlpack.pxd)
// for where the module lives: as written (`cimport dlpack`) for top-level
// modules, relative to the package otherwise, so that it can only find the
// dlpack.pxd beside it.
func (b Backend) ownCimport(stmt string) string {
	if b.Package == "" {
		return stmt
	}
	switch {
	case stmt == "cimport dlpack":
		return "from . cimport dlpack"
	case strings.HasPrefix(stmt, "from dlpack cimport "):
		return "from .dlpack" + strings.TrimPrefix(stmt, "from dlpack")
	}
	return stmt
}

// protocolNames are the public names the hand-written sources add to a
// module's __all__ (each with `__all__ += [...]`); the stubs, which declare
// them, list them too. mypy's stubtest, in the test suite, compares both.
var protocolNames = []string{"DTYPE_NAMES", "DataType", "Device", "Tensor", "from_buffer", "from_dlpack",
	"from_managed", "from_pointer", "to_managed"}

// declared lists the public names of the generated declarations: the
// Cython module has no ctypes structs or function types.
func (m *module) declared(cython bool) []string {
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

// pylist renders `name = [...]`, one quoted item per line, in the order
// ruff's RUF022 wants for __all__: CONSTANTS, then Classes, then the rest.
func pylist(name string, items []string) string {
	class := func(s string) int {
		switch {
		case strings.ToUpper(s) == s:
			return 0
		case s[:1] == strings.ToUpper(s[:1]):
			return 1
		}
		return 2
	}
	items = append([]string(nil), items...)
	sort.SliceStable(items, func(i, j int) bool {
		if ci, cj := class(items[i]), class(items[j]); ci != cj {
			return ci < cj
		}
		return items[i] < items[j]
	})
	var b strings.Builder
	b.WriteString(name + " = [\n")
	for _, it := range items {
		b.WriteString("    " + pystr(it) + ",\n")
	}
	b.WriteString("]")
	return b.String()
}

// splitSource separates a hand-written source into its import statements
// (after the leading comment block) and the code that follows them.
func splitSource(text string) (imports []string, body string) {
	lines := strings.Split(text, "\n")
	i := 0
	for i < len(lines) && (strings.TrimSpace(lines[i]) == "" || strings.HasPrefix(lines[i], "#")) {
		i++
	}
	for i < len(lines) {
		l := lines[i]
		if strings.TrimSpace(l) == "" {
			i++
			continue
		}
		if !strings.HasPrefix(l, "import ") && !strings.HasPrefix(l, "from ") && !strings.HasPrefix(l, "cimport ") {
			break
		}
		stmt := l
		for strings.Contains(stmt, "(") && !strings.Contains(stmt, ")") && i+1 < len(lines) {
			i++
			stmt += "\n" + lines[i]
		}
		imports = append(imports, stmt)
		i++
	}
	return imports, strings.Join(lines[i:], "\n")
}

// importBlock renders import statements once each: cimports, then plain
// imports, then from-imports, each group sorted; from-imports of one module
// are merged into one statement.
func importBlock(stmts []string) string {
	type group struct{ kind, module string }
	names := map[group]map[string]bool{}
	var plain []string
	seen := map[string]bool{}
	for _, s := range stmts {
		flat := strings.NewReplacer("(", "", ")", "", "\n", " ").Replace(s)
		f := strings.Fields(flat)
		if len(f) >= 4 && f[0] == "from" && (f[2] == "import" || f[2] == "cimport") {
			g := group{f[2], f[1]}
			if names[g] == nil {
				names[g] = map[string]bool{}
			}
			for _, n := range strings.Split(strings.Join(f[3:], " "), ",") {
				if n = strings.TrimSpace(n); n != "" {
					names[g][n] = true
				}
			}
			continue
		}
		if !seen[flat] {
			seen[flat] = true
			plain = append(plain, flat)
		}
	}
	var cimports, imports, froms []string
	for _, s := range plain {
		if strings.HasPrefix(s, "cimport ") {
			cimports = append(cimports, s)
		} else {
			imports = append(imports, s)
		}
	}
	for g, set := range names {
		var list []string
		for n := range set {
			list = append(list, n)
		}
		sort.Strings(list)
		stmt := "from " + g.module + " " + g.kind + " " + strings.Join(list, ", ")
		if len(stmt) > 100 {
			stmt = "from " + g.module + " " + g.kind + " (\n    " + strings.Join(list, ",\n    ") + ",\n)"
		}
		if g.kind == "cimport" {
			cimports = append(cimports, stmt)
		} else {
			froms = append(froms, stmt)
		}
	}
	for _, l := range [][]string{cimports, imports, froms} {
		sort.Strings(l)
	}
	return strings.Join(append(append(cimports, imports...), froms...), "\n")
}

// module is the view the templates render.
type module struct {
	Marker, License, Version, Schema string
	Package                          string // the package python/ is, "" for top-level modules
	Title                            string // the release as prose names it (ir.Version.Title)
	Major, Minor                     int
	Constants                        []constant
	Enums                            []enum
	Structs                          []structure
	FuncTypes                        []functype
	Capsules                         []constant // Python constants naming the capsules of this release
	CapsuleC                         []constant // the same names as C strings, for the Cython module
	ExchangeAttr                     string     // the type attribute of the exchange API, from v1.2
	PreviousExchangeAttr             string     // its spelling in the release before, if it was renamed
	ExchangeCapsule                  string     // its capsule name, from v1.3 (before: an integer address)
	Layouts                          []layout
	CythonDecls                      []string // the body of the .pxd's extern block
	Cython                           bool     // rendering the Cython module's files
	Imports, Body                    string   // the import block and the hand-written sources
	All                              []string // the module's __all__ before the hand-written sources add theirs
	Names                            string   // the Python-level declarations both modules share
	SubbytePadded                    string   // the padded-sub-byte flag's name, "" before DLPack 1.1
	Leaves                           string   // _LEAVES: every struct's leaf fields and struct-module codes
}

type constant struct {
	Name, Doc, Value string
}

type enum struct {
	Name, Doc string
	Members   []constant
	Mask      string // the values as a bit mask, bit v for value v
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
	m := &module{Marker: backend.Marker, License: backend.SPDX, Version: v.String(), Title: v.Title(), Schema: b.Schema, Package: b.Package}
	if vm := api.Versions; vm.Major != nil {
		m.Major, m.Minor = int(vm.Major.Value), int(vm.Minor.Value)
	}
	for _, mac := range api.Macros {
		if mac.Kind == ir.MacroInteger {
			m.Constants = append(m.Constants, constant{Name: mac.Name, Doc: mac.Doc, Value: fmt.Sprint(mac.Value)})
		}
	}
	pr := api.Protocol
	for _, c := range []struct {
		name *ir.PythonName
		py   string // the Python constant of the name
		cstr string // its C-string twin in the Cython module
	}{
		{pr.Capsule, "CAPSULE_NAME", "_NAME"},
		{pr.UsedCapsule, "USED_CAPSULE_NAME", "_USED_NAME"},
		{pr.VersionedCapsule, "VERSIONED_CAPSULE_NAME", "_VNAME"},
		{pr.UsedVersionedCapsule, "USED_VERSIONED_CAPSULE_NAME", "_USED_VNAME"},
	} {
		if c.name != nil {
			m.Capsules = append(m.Capsules, constant{Name: c.py, Doc: c.name.Doc, Value: pystr(c.name.Name)})
			m.CapsuleC = append(m.CapsuleC, constant{Name: c.cstr, Value: pystr(c.name.Name)})
		}
	}
	if a := pr.ExchangeAPIAttribute; a != nil {
		m.ExchangeAttr, m.PreviousExchangeAttr = a.Name, a.Previous
	}
	if f := api.Flag.SubbytePadded; f != nil {
		m.SubbytePadded = f.Name
	}
	if pr.ExchangeAPICapsule != nil {
		m.ExchangeCapsule = pr.ExchangeAPICapsule.Name
	}
	for _, d := range api.Decls {
		switch d := d.(type) {
		case *ir.Enum:
			e := enum{Name: d.Name, Doc: d.Doc}
			var mask uint64
			for _, ev := range d.Values {
				if ev.Value < 0 || ev.Value > 63 {
					return nil, backend.Errorf(ev.Pos, "%s.%s = %d: the Python modules keep enum values in a 64-bit mask", d.Name, ev.Name, ev.Value)
				}
				mask |= 1 << ev.Value
				e.Members = append(e.Members, constant{Name: ev.Name, Doc: ev.Doc, Value: fmt.Sprint(ev.Value)})
			}
			e.Mask = fmt.Sprintf("0x%x", mask)
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
		case *ir.FuncType:
			t, err := ctype(&ir.Type{Kind: ir.Func, Sig: d.Sig})
			if err != nil {
				return nil, backend.Errorf(d.Pos, "%s: %v", d.Name, err)
			}
			m.FuncTypes = append(m.FuncTypes, functype{Name: d.Name, Doc: d.Doc, Type: wrapCall(d.Name+" = ", t)})
		}
		m.CythonDecls = append(m.CythonDecls, cythonDecl(d, api.Version()))
	}
	for _, abi := range ir.ABIs {
		// The interpreter's own C compiler decides, through ctypes, both
		// facts a model is made of; a platform matching none (m68k aligns
		// int64 to 2) is not checked.
		l := layout{ABI: abi.Name, Condition: fmt.Sprintf("_POINTER_SIZE == %d and ctypes.alignment(ctypes.c_int64) == %d", abi.PtrSize, abi.Int64Align)}
		for _, lc := range api.LayoutChecks(abi) {
			if lc.Field == nil {
				l.Checks = append(l.Checks, check{Struct: lc.Struct.Name, Want: lc.Size})
			} else {
				l.Checks = append(l.Checks, check{Struct: lc.Struct.Name, Field: lc.Field.Name, Want: lc.Offset})
			}
		}
		m.Layouts = append(m.Layouts, l)
	}
	m.Names = pythonNames(m)
	if m.Major > 0 {
		var b strings.Builder
		b.WriteString("_LEAVES = {\n")
		for _, st := range api.Structs() {
			fmt.Fprintf(&b, "    %s: [\n", pystr(st.Name))
			for _, l := range leaves(st, "") {
				fmt.Fprintf(&b, "        (%s, %s),\n", pystr(l[0]), pystr(l[1]))
			}
			b.WriteString("    ],\n")
		}
		b.WriteString("}")
		m.Leaves = b.String()
	}
	return m, nil
}

// structCodes are the struct-module codes of the fixed-size scalars.
var structCodes = map[string]string{
	"char": "c", "int": "i",
	"int8_t": "b", "int16_t": "h", "int32_t": "i", "int64_t": "q",
	"uint8_t": "B", "uint16_t": "H", "uint32_t": "I", "uint64_t": "Q",
}

// leaves lists the scalar fields of s, nested structs flattened into dotted
// paths, in C order, each with its struct-module code ("P" for a pointer,
// whose size is the ABI's).
func leaves(s *ir.Struct, prefix string) [][2]string {
	var out [][2]string
	for _, f := range s.Fields {
		t := f.Type
		switch {
		case t.Kind == ir.Pointer || t.Kind == ir.Func:
			out = append(out, [2]string{prefix + f.Name, "P"})
		case t.Kind == ir.Scalar:
			out = append(out, [2]string{prefix + f.Name, structCodes[t.Name]})
		default:
			switch d := t.Decl.(type) {
			case *ir.Struct:
				out = append(out, leaves(d, prefix+f.Name+".")...)
			case *ir.Enum:
				code := "I"
				if ir.Scalars[d.Storage].Signed {
					code = "i"
				}
				out = append(out, [2]string{prefix + f.Name, code})
			default: // a function type
				out = append(out, [2]string{prefix + f.Name, "P"})
			}
		}
	}
	return out
}

// pythonNames renders the declarations both modules define alike, as
// module attributes: the release, the macros and flags, an IntEnum per enum
// and the capsule names.
func pythonNames(m *module) string {
	var b strings.Builder
	fmt.Fprintf(&b, "DLPACK_VERSION_STRING = %s\n", pystr(m.Version))
	for _, c := range m.Constants {
		fmt.Fprintf(&b, "\n%s\n%s = %s\n", comment("", c.Doc), c.Name, c.Value)
	}
	for _, e := range m.Enums {
		fmt.Fprintf(&b, "\n\nclass %s(enum.IntEnum):\n%s\n", e.Name, docstring("    ", e.Doc))
		for _, c := range e.Members {
			fmt.Fprintf(&b, "\n%s\n    %s = %s\n", comment("    ", c.Doc), c.Name, c.Value)
		}
	}
	if m.Major > 0 {
		value := "0  # none in this release: sub-byte elements are packed"
		if m.SubbytePadded != "" {
			value = m.SubbytePadded
		}
		fmt.Fprintf(&b, "\n# The flag of padded sub-byte elements, for the protocol.\n_SUBBYTE_PADDED = %s\n", value)
	}
	if len(m.Capsules) > 0 {
		b.WriteString("\n")
	}
	for _, c := range m.Capsules {
		fmt.Fprintf(&b, "\n%s\n%s = %s\n", comment("", c.Doc), c.Name, c.Value)
	}
	return strings.TrimRight(b.String(), "\n")
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
		if ir.Scalars[d.Storage].Signed {
			return "ctypes.c_int32", nil // C stores enums as int
		}
		return "ctypes.c_uint32", nil
	case *ir.Struct, *ir.FuncType:
		return t.Name, nil
	}
	return "", fmt.Errorf("no ctypes type for %s", t.Name)
}

// wrapCall breaks a call expression that would not fit in 100 columns
// after prefix into one argument per line. Its arguments are split at the
// top-level commas only.
func wrapCall(prefix, call string) string {
	open := strings.Index(call, "(")
	if len(prefix)+len(call) <= 100 || open < 0 || !strings.HasSuffix(call, ")") {
		return call
	}
	var args []string
	depth, start := 0, open+1
	for i := open + 1; i < len(call)-1; i++ {
		switch call[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				args = append(args, strings.TrimSpace(call[start:i]))
				start = i + 1
			}
		}
	}
	args = append(args, strings.TrimSpace(call[start:len(call)-1]))
	return call[:open+1] + "\n    " + strings.Join(args, ",\n    ") + ",\n)"
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
