// Package golang is dlgen's Go backend. It writes package dlpack: pure Go
// (no cgo) types whose memory layout is identical to the C ABI, typed enums
// with String methods, version and flag constants, and one file per C data
// model (layout_64bit.go, layout_386.go, layout_32bit_align8.go; the GOARCH
// lists are in layout.go) that sizes the padding Go needs where C aligns
// 64-bit integers more than Go does (arm, mips, mipsle, windows/386) and
// breaks the build on any size or offset mismatch; layout_unknown.go breaks
// it on a platform whose C data model dlgen does not know.
//
// Pointers to C data are typed Go pointers or unsafe.Pointer; function
// pointers are uintptr, since Go cannot call C function pointers directly.
// An integer field that holds an enum or flags group (ir.Field.Holds) gets
// that type. rules.go holds the import rules as tables a checker reads
// (docs/rules.md): MaxDims, when each pointer field may be NULL, the facts
// of device types and type codes as methods (HostReadable, Addressable,
// FixedBits, Known), DataType's String and ParseDataType over the schema's
// dtype names, and Rule, the message of every check. release.go holds
// Release, the package's release as one value a runtime that speaks every
// release reads (dltensor.WithRelease).
package golang

import (
	"bytes"
	"fmt"
	"go/parser"
	"go/token"
	"path"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"
	"github.com/dlgen/dlgen/internal/backend"
	"github.com/dlgen/dlgen/internal/ir"
)

// Dir is where the package is written, relative to the output directory.
const Dir = "go/dlpack"

// Package is the name of the generated package.
const Package = "dlpack"

// Backend is the Go backend.
type Backend struct {
	Schema string // names the schema in the package doc
}

// Name is "go", the value of -lang that selects the Go backend.
func (Backend) Name() string { return "go" }

func init() {
	backend.Register(backend.Registration{Name: "go", New: func(c backend.Config) backend.Backend { return Backend{Schema: c.Schema} },
		Reserved: reserved})
}

// Generate renders the package of api.
func (b Backend) Generate(api *ir.API) ([]backend.File, error) {
	p, err := pads(api)
	if err != nil {
		return nil, err
	}
	g := &gen{api: api, names: names{}, pads: p}
	main, err := g.mainFile(b.Schema)
	if err != nil {
		return nil, err
	}
	rules, err := g.rulesFile()
	if err != nil {
		return nil, err
	}
	if err := g.claimPads(); err != nil {
		return nil, err
	}
	files := []backend.File{{Path: Dir + "/dlpack.go", Content: main}, {Path: Dir + "/rules.go", Content: rules}}
	release, err := g.releaseFile()
	if err != nil {
		return nil, err
	}
	if release != nil {
		files = append(files, backend.File{Path: Dir + "/release.go", Content: release})
	}
	for ti, t := range targets {
		content, err := g.guardFile(ti)
		if err != nil {
			return nil, err
		}
		files = append(files, backend.File{Path: Dir + "/" + t.file, Content: content})
	}
	content, err := g.unknownFile()
	if err != nil {
		return nil, err
	}
	files = append(files, backend.File{Path: Dir + "/" + unknownFile, Content: content})
	if err := g.claimImports(files); err != nil {
		return nil, err
	}
	return files, nil
}

// claimImports claims the name of every package files import (strconv,
// unsafe), which a type of the package may not take.
func (g *gen) claimImports(files []backend.File) error {
	for _, f := range files {
		parsed, err := parser.ParseFile(token.NewFileSet(), f.Path, f.Content, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range parsed.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			name := path.Base(p)
			if imp.Name != nil {
				name = imp.Name.Name
			}
			if err := g.names.claimOwn(name, "the import of "+p); err != nil {
				return err
			}
		}
	}
	return nil
}

type gen struct {
	api   *ir.API
	names names
	pads  padding
}

func newFile() *jen.File {
	f := jen.NewFile(Package)
	f.HeaderComment(backend.Marker)
	f.HeaderComment(backend.SPDX)
	return f
}

func render(f *jen.File) ([]byte, error) {
	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (g *gen) mainFile(schema string) ([]byte, error) {
	f := newFile()
	v := g.api.Version()
	f.PackageComment(fmt.Sprintf("Package dlpack mirrors the C ABI of DLPack %s in pure Go.", v.Title()))
	f.PackageComment("")
	f.PackageComment("Every struct has the size and field offsets of its C counterpart (named in")
	f.PackageComment("its doc comment) on every GOARCH with cgo, so a *ManagedTensor may be")
	f.PackageComment("converted to and from the C pointer a consumer receives. Where C aligns")
	f.PackageComment("64-bit integers to 8 and Go to 4 (arm, mips, mipsle, windows/386), blank")
	f.PackageComment("fields carry C's padding; there a value Go allocates is only 4-byte")
	f.PackageComment("aligned, which those CPUs accept. layout_*.go break the build if a layout")
	f.PackageComment("ever differs, and on a platform whose C data model dlgen does not know.")
	f.PackageComment("Function pointers are uintptr: call them through C.")
	f.PackageComment("")
	f.PackageComment("Generated by dlgen from " + schema + ".")

	var macros []jen.Code
	for _, m := range g.api.Macros {
		if m.Kind != ir.MacroInteger {
			continue
		}
		name := macroName(m.Name)
		if err := g.names.claim(name, m.Name, m.Pos); err != nil {
			return nil, err
		}
		macros = append(macros, comments(doc(name+" is "+m.Name+": ", m.Doc)).Id(name).Op("=").Lit(int(m.Value)))
	}
	if len(macros) > 0 {
		f.Const().Defs(macros...)
	}

	for _, d := range g.api.Decls {
		var err error
		switch d := d.(type) {
		case *ir.Struct:
			err = g.structDecl(f, d)
		case *ir.Enum:
			err = g.enumDecl(f, d)
		case *ir.Flags:
			err = g.flagsDecl(f, d)
		case *ir.FuncType:
			name := typeName(d.Name)
			if err = g.names.claim(name, d.Name, d.Pos); err == nil {
				f.Add(comments(doc(name+" is "+d.Name+", "+d.Sig.C("(*)")+". ", d.Doc)).Type().Id(name).Uintptr())
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return render(f)
}

// fieldType is the Go type of field fd: the enum's or the flags group's
// type for an integer field that holds one (C declares it a plain
// integer; the schema keeps both in the field's type).
func (g *gen) fieldType(fd *ir.Field) (*jen.Statement, error) {
	switch h := fd.Holds.(type) {
	case *ir.Enum:
		return jen.Id(typeName(h.Name)), nil
	case *ir.Flags:
		return jen.Id(flagsTypeName(h.Name)), nil
	}
	return g.goType(fd.Type)
}

func (g *gen) structDecl(f *jen.File, s *ir.Struct) error {
	name := typeName(s.Name)
	if err := g.names.claim(name, s.Name, s.Pos); err != nil {
		return err
	}
	var fields []jen.Code
	for i, fd := range s.Fields {
		typ, err := g.fieldType(fd)
		if err != nil {
			return backend.Errorf(fd.Pos, "%s.%s: %v", s.Name, fd.Name, err)
		}
		if _, ok := g.pads[s][i]; ok {
			fields = append(fields, jen.Comment("C aligns the next field more than Go does on some 32-bit platforms.").Line().
				Id("_").Index(jen.Id(padName(s, i))).Byte())
		}
		fields = append(fields, comments(doc(fd.Name+": ", fd.Doc)).Id(fieldName(fd.Name)).Add(typ))
	}
	f.Add(comments(doc(name+" is "+s.Name+". ", s.Doc)).Type().Id(name).Struct(fields...))
	return nil
}

func (g *gen) enumDecl(f *jen.File, e *ir.Enum) error {
	name := typeName(e.Name)
	if err := g.names.claim(name, e.Name, e.Pos); err != nil {
		return err
	}
	f.Add(comments(doc(name+" is "+e.Name+". ", e.Doc)).Type().Id(name).Id(goScalar[e.Storage]))
	var defs []jen.Code
	var cases, known []jen.Code
	for _, ev := range e.Values {
		id := enumeratorName(e.Name, ev.Name)
		if err := g.names.claim(id, ev.Name, ev.Pos); err != nil {
			return err
		}
		defs = append(defs, comments(doc(id+" is "+ev.Name+": ", ev.Doc)).Id(id).Id(name).Op("=").Lit(int(ev.Value)))
		cases = append(cases, jen.Case(jen.Id(id)).Block(jen.Return(jen.Lit(ev.Name))))
		known = append(known, jen.Id(id))
	}
	f.Const().Defs(defs...)
	cases = append(cases, jen.Default().Block(jen.Return(
		jen.Lit(name+"(").Op("+").Qual("strconv", "FormatInt").Call(jen.Int64().Call(jen.Id("v")), jen.Lit(10)).Op("+").Lit(")"))))
	f.Comment("String returns the C name of v, or " + name + "(N) for a value this release does not define.")
	f.Func().Params(jen.Id("v").Id(name)).Id("String").Params().String().Block(jen.Switch(jen.Id("v")).Block(cases...))
	f.Comment(fmt.Sprintf("Known reports whether DLPack v%s defines v.", g.api.Version()))
	f.Func().Params(jen.Id("v").Id(name)).Id("Known").Params().Bool().Block(
		jen.Switch(jen.Id("v")).Block(jen.Case(known...).Block(jen.Return(jen.True()))),
		jen.Return(jen.False()))
	return nil
}

func (g *gen) flagsDecl(f *jen.File, fl *ir.Flags) error {
	name := flagsTypeName(fl.Name)
	if err := g.names.claim(name, fl.Name, fl.Pos); err != nil {
		return err
	}
	f.Add(comments(doc(name+" is a set of "+fl.Name+"_* bits. ", fl.Doc)).Type().Id(name).Id(goScalar[fl.Type]))
	var defs []jen.Code
	for _, b := range fl.Bits {
		id := macroName(b.Name)
		if err := g.names.claim(id, b.Name, b.Pos); err != nil {
			return err
		}
		defs = append(defs, comments(doc(id+" is "+b.Name+": ", b.Doc)).Id(id).Id(name).Op("=").Lit(1).Op("<<").Lit(b.Bit))
	}
	f.Const().Defs(defs...)
	return nil
}

var goScalar = map[string]string{
	"char": "byte", "int": "int32",
	"int8_t": "int8", "int16_t": "int16", "int32_t": "int32", "int64_t": "int64",
	"uint8_t": "uint8", "uint16_t": "uint16", "uint32_t": "uint32", "uint64_t": "uint64",
}

// goType returns the Go type with the same size and alignment as t.
func (g *gen) goType(t *ir.Type) (*jen.Statement, error) {
	switch t.Kind {
	case ir.Func:
		return jen.Uintptr(), nil
	case ir.Pointer:
		if t.Elem.Kind == ir.Scalar && t.Elem.Name == "void" {
			return jen.Qual("unsafe", "Pointer"), nil
		}
		if t.Elem.Kind == ir.Func {
			return nil, fmt.Errorf("pointer to an inline function type is not supported")
		}
		elem, err := g.goType(t.Elem)
		if err != nil {
			return nil, err
		}
		return jen.Op("*").Add(elem), nil
	case ir.Scalar:
		s, ok := goScalar[t.Name]
		if !ok {
			return nil, fmt.Errorf("no Go type for C %s", t.Name)
		}
		return jen.Id(s), nil
	}
	if e, ok := t.Decl.(*ir.Enum); ok && ir.Scalars[e.Storage].Size != 4 {
		// C stores an enum-typed field as int; a narrower Go type would
		// change the layout.
		return nil, fmt.Errorf("enum %s is stored as %s, which has not the size of the C int a field of it takes", e.Name, e.Storage)
	}
	return jen.Id(typeName(t.Name)), nil
}

// doc joins a lead-in and a documentation string into one comment text.
func doc(lead, text string) string {
	text = strings.TrimSpace(text)
	if text == "" {
		return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(lead), ":"))
	}
	return lead + text
}

// comments renders text as // lines wrapped to fit gofmt'd code.
func comments(text string) *jen.Statement {
	s := jen.Null()
	for _, l := range backend.Wrap(text, 76) {
		s.Comment(l).Line()
	}
	return s
}
