// Package rust is dlgen's Rust backend. It writes a crate, rust/dlpack:
//   - Cargo.toml, with rust-version and, from DLPack 1.0, the features
//     "safe" (on by default) and "pyo3";
//   - src/lib.rs, #![no_std]: every struct #[repr(C)] under its C name with
//     its C field names, every enum a #[repr(transparent)] newtype with an
//     associated constant per enumerator (a foreign value is a value, not
//     undefined behaviour), macros and flag bits as constants of the C
//     types, function-pointer typedefs as Option<unsafe extern "C" fn ...>,
//     and the schema's documentation on each;
//   - src/layout.rs: C_DATA_MODEL and, for every data model of ir.ABIs, the
//     size, alignment and every field offset of every struct as
//     `const _: () = assert!(...)`, each model selected by cfg predicates
//     (the "cfg" template of rust-layout.rs.tmpl); a target no model names
//     gets compile_error!;
//   - from DLPack 1.0, src/rules.rs: the import rules as data (rules.go),
//     the module `rules`, which the hand-written safe layer reads.
//
// Only what varies by release is generated, from the IR through the
// templates rust-*.tmpl. The readers of the rule tables (rules/types.rs),
// the safe layer (an owned managed tensor, import validation, exports of
// Rust memory) and the PyO3 glue are hand-written Rust in internal/backend/rust/runtime, embedded
// here and copied, behind the generated marker lines, into src/ of every
// release from 1.0; python/exchange.rs is
// exchange_api.rs where the release has the C exchange API and
// no_exchange_api.rs where it has not.
//
// The output is rustfmt- and clippy-clean. The templates lay out every
// declaration as rustfmt does, except the few whose layout rustfmt would
// change with the width of the schema's names (function pointers, the
// rule tables' pattern and parameter lists): those have one layout for
// every release and #[rustfmt::skip], so that no line width is computed.
package rust

import (
	"bytes"
	"embed"
	"fmt"
	"strings"

	"github.com/dlgen/dlgen/internal/backend"
	"github.com/dlgen/dlgen/internal/ir"
)

// Dir is where the crate is written, relative to the output directory.
const Dir = "rust/dlpack"

// RustVersion is the oldest Rust the crate builds with: offset_of! (1.77)
// in the layout guards, core::error::Error (1.81) in the safe layer.
const RustVersion = "1.81"

// PyO3 is the PyO3 release line the pyo3 feature builds against.
const PyO3 = "0.30"

// embedded are the backend's templates (declarations only) and the crate's
// hand-written runtime (runtime/): its safe layer (import checks, owned
// tensors, exports of Rust memory) and its PyO3 glue, the same for every
// release, shipped beside the declarations.
//
//go:embed templates/*.tmpl runtime/*.rs
var embedded embed.FS

// handWritten maps the crate's hand-written files to their sources in
// internal/backend/rust/runtime; the exchange module is chosen per release.
var handWritten = []struct{ path, source string }{
	{"src/rules/types.rs", "rule_types.rs"},
	{"src/check.rs", "check.rs"},
	{"src/tensor.rs", "tensor.rs"},
	{"src/export.rs", "export.rs"},
	{"src/python.rs", "python.rs"},
	// The safe layer's tests, which cargo test runs (under Miri too): a
	// consumer's and a producer's view, through the public API alone.
	{"tests/safe_layer.rs", "safe_layer_tests.rs"},
}

// Backend is the Rust backend.
type Backend struct {
	Schema string // names the schema in the crate documentation
}

// Name is "rust", the value of -lang that selects the backend.
func (Backend) Name() string { return "rust" }

func init() {
	backend.Register(backend.Registration{Name: "rust", New: func(c backend.Config) backend.Backend { return Backend{Schema: c.Schema} },
		Reserved: reserved})
}

// Generate renders the crate of api.
func (b Backend) Generate(api *ir.API) ([]backend.File, error) {
	v, err := b.view(api)
	if err != nil {
		return nil, err
	}
	outputs := []struct{ path, template string }{
		{"Cargo.toml", "templates/Cargo.toml.tmpl"},
		{"src/lib.rs", "templates/lib.rs.tmpl"},
		{"src/layout.rs", "templates/layout.rs.tmpl"},
	}
	if v.Safe {
		outputs = append(outputs, struct{ path, template string }{"src/rules.rs", "templates/rules.rs.tmpl"})
	}
	var files []backend.File
	for _, o := range outputs {
		tmpl, err := backend.ParseTemplate(embedded, o.template, map[string]any{"doc": doc, "noCfg": noCfg})
		if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		if err := tmpl.Execute(&buf, v); err != nil {
			return nil, fmt.Errorf("%s: %w", o.template, err)
		}
		files = append(files, backend.File{Path: Dir + "/" + o.path, Content: buf.Bytes()})
	}
	// cargo build or test inside the vendored crate leaves its build output
	// there: ignored, so that vendoring commits only dlgen's files.
	files = append(files, backend.File{Path: Dir + "/.gitignore",
		Content: []byte("# " + backend.Marker + "\n# " + backend.SPDX + "\n/target/\n/Cargo.lock\n")})
	if !v.Safe {
		return files, nil
	}
	copies := handWritten
	exchange := "no_exchange_api.rs"
	if v.Rules.Python.ExchangeAttr != "" {
		exchange = "exchange_api.rs"
	}
	copies = append(copies, struct{ path, source string }{"src/python/exchange.rs", exchange})
	for _, c := range copies {
		text, err := embedded.ReadFile("runtime/" + c.source)
		if err != nil {
			return nil, err
		}
		content := "// " + backend.Marker + "\n// " + backend.SPDX + "\n\n" + string(text)
		files = append(files, backend.File{Path: Dir + "/" + c.path, Content: []byte(content)})
	}
	return files, nil
}

// handDebug is the struct whose Debug the safe layer writes by hand
// (internal/backend/rust/runtime/rule_types.rs, beside its Display): a dtype shows as its name, as
// Python's repr shows it, not as `code: 2`.
const handDebug = "DLDataType"

// crate is what the templates render: every decision is made here.
type crate struct {
	Marker, License, Version, Schema string
	CrateVersion, RustVersion, PyO3  string
	Safe                             bool   // versioned tensors: the safe layer and PyO3 glue
	Imports                          string // the core::ffi types the declarations use
	Constants                        []constant
	Decls                            []decl
	Models                           []model
	Rules                            *rules
}

type constant struct{ Doc, Name, Type, Value string }

type decl struct {
	Kind, Name, Doc string
	Derive          string      // struct and enum
	Fields          []field     // struct
	Repr            string      // enum: the Rust integer it wraps
	Values          []enumValue // enum
	Bits            []constant  // flags
	Type            string      // functype: the function pointer, rendered
	NonSnakeCase    bool        // functype: a parameter name is not in snake case
}

// field is a struct member: FuncPointer says its type is a function
// pointer, laid out by rtype.text, which rustfmt must skip.
type field struct {
	Doc, Line   string
	FuncPointer bool
	Name, Zero  string // for ZERO: the field's Rust name and zero value
}

type enumValue struct {
	Doc, Name string
	Value     int64
}

func (b Backend) view(api *ir.API) (*crate, error) {
	v := api.Version()
	c := &crate{
		Marker: backend.Marker, License: backend.SPDX, Version: v.String(), Schema: b.Schema,
		CrateVersion: fmt.Sprintf("%d.%d.0", v.Major, v.Minor), RustVersion: RustVersion, PyO3: PyO3,
		Safe: api.Versions.Major != nil && api.Versions.Major.Value > 0,
	}
	for _, m := range api.Macros {
		if m.Kind == ir.MacroInteger {
			typ := "u32" // as DLPackVersion stores the version numbers
			if m.Value < 0 || m.Value > 1<<32-1 {
				typ = "i64"
			}
			c.Constants = append(c.Constants, constant{Doc: m.Doc, Name: m.Name, Type: typ, Value: fmt.Sprint(m.Value)})
		}
	}
	used := map[string]bool{}
	for _, d := range api.Decls {
		rd, err := c.decl(d, used)
		if err != nil {
			return nil, err
		}
		if rd != nil {
			c.Decls = append(c.Decls, *rd)
		}
	}
	c.Imports = ffiImports(used)
	c.Models = models(api)
	if c.Safe {
		r, err := ruleTables(api)
		if err != nil {
			return nil, err
		}
		c.Rules = r
	}
	return c, nil
}

// ffiTypes are the core::ffi types the declarations may name.
var ffiTypes = []string{"c_char", "c_int", "c_void"}

// decl is the Rust declaration of d, or nil for none; used notes the
// core::ffi types it names.
func (c *crate) decl(d ir.Decl, used map[string]bool) (*decl, error) {
	note := func(t rtype) {
		for _, ffi := range ffiTypes {
			if strings.Contains(t.text(""), ffi) {
				used[ffi] = true
			}
		}
	}
	switch d := d.(type) {
	case *ir.Struct:
		s := decl{Kind: "struct", Name: d.Name, Doc: d.Doc, Derive: "Clone, Copy, Debug"}
		if c.Safe && d.Name == handDebug {
			s.Derive = "Clone, Copy"
		}
		if pointerFree(d) {
			s.Derive += ", PartialEq, Eq, Hash"
		}
		for _, f := range d.Fields {
			t, err := rustType(f.Type)
			if err != nil {
				return nil, fmt.Errorf("%s.%s: %w", d.Name, f.Name, err)
			}
			note(t)
			s.Fields = append(s.Fields, field{Doc: f.Doc, Line: "pub " + ident(f.Name) + ": " + t.text("    ") + ",", FuncPointer: t.isFunc(),
				Name: ident(f.Name), Zero: t.zero})
		}
		return &s, nil
	case *ir.Enum:
		repr, ok := rustScalar[d.Storage]
		if !ok {
			return nil, fmt.Errorf("enum %s: no Rust type for %s", d.Name, d.Storage)
		}
		e := decl{Kind: "enum", Name: d.Name, Doc: d.Doc, Repr: repr}
		for _, ev := range d.Values {
			e.Values = append(e.Values, enumValue{Doc: ev.Doc, Name: ev.Name, Value: ev.Value})
		}
		return &e, nil
	case *ir.Flags:
		typ, ok := rustScalar[d.Type]
		if !ok {
			return nil, fmt.Errorf("flags %s: no Rust type for %s", d.Name, d.Type)
		}
		f := decl{Kind: "flags", Name: d.Name, Doc: d.Doc}
		for _, bit := range d.Bits {
			f.Bits = append(f.Bits, constant{Doc: bit.Doc, Name: bit.Name, Type: typ, Value: fmt.Sprintf("1 << %d", bit.Bit)})
		}
		return &f, nil
	case *ir.FuncType:
		t, err := funcType(d.Sig)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.Name, err)
		}
		note(t)
		// Parameter names are C's; rustc would ask for snake case.
		return &decl{Kind: "functype", Name: d.Name, Doc: d.Doc, Type: t.text(""), NonSnakeCase: !t.snakeCase()}, nil
	}
	return nil, nil
}

// ffiImports is the use line of the core::ffi types used, or "".
func ffiImports(used map[string]bool) string {
	var imports []string
	for _, ffi := range ffiTypes {
		if used[ffi] {
			imports = append(imports, ffi)
		}
	}
	switch len(imports) {
	case 0:
		return ""
	case 1:
		return "use core::ffi::" + imports[0] + ";"
	}
	return "use core::ffi::{" + strings.Join(imports, ", ") + "};"
}

// doc renders text as /// lines at indent, wrapped at docWidth (prose,
// which rustfmt leaves as it is), with the characters Markdown would take for links or HTML tags
// escaped; nothing for an empty text.
func doc(indent, text string) string {
	text = strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`, "<", `\<`).Replace(strings.TrimSpace(text))
	var b strings.Builder
	for _, l := range backend.Wrap(text, docWidth-len(indent)-4) {
		b.WriteString(indent + "/// " + l + "\n")
	}
	return b.String()
}

// docWidth is where documentation lines end.
const docWidth = 80

// Verbatim maps each hand-written source of internal/backend/rust/runtime, by path in the
// repository, to its text, which Generate copies unchanged behind the
// marker lines, so that golden files can name the sources instead of
// repeating them (package backendtest).
func (Backend) Verbatim() map[string]string {
	out := map[string]string{}
	entries, _ := embedded.ReadDir("runtime")
	for _, e := range entries {
		if data, err := embedded.ReadFile("runtime/" + e.Name()); err == nil {
			out["internal/backend/rust/runtime/"+e.Name()] = string(data)
		}
	}
	return out
}
