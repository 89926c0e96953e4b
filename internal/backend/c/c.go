// Package c is dlgen's C backend: it writes c/dlpack/dlpack.h, a drop-in
// replacement for upstream dlpack.h of the chosen release, with layout
// guards (_Static_assert / static_assert) on every C data model of ir.ABIs,
// each behind a preprocessor condition that identifies the compilers and
// targets following it (layout.go).
//
// Backports: a struct whose typedef upstream added in a later release
// (ir.Struct.TypedefSince) gets that typedef in the headers of earlier
// releases too, as the frameworks' patched copies have it, wherever a
// repeated typedef is legal (C11 and later, C++), so that code declaring its
// own still compiles. DLGEN_BACKPORTS, defined to 0 before the include,
// gives upstream's declarations exactly; defined to 1, the backports in
// every language mode (C99 included).
package c

import (
	"bytes"
	"embed"
	"fmt"
	"strings"

	"github.com/dlgen/dlgen/internal/backend"
	"github.com/dlgen/dlgen/internal/ir"
)

// templates are the backend's templates, declarations only.
//
//go:embed templates/*.tmpl
var templates embed.FS

// helpersCode is the code of the helper header, hand-written, the same for
// every release (runtime/dlpack_helpers.h): written into each release's
// header between the release's macros and its tables, keeping only the
// release's side of each #if DLGEN_HAS_... block. It is an ordinary file
// that editors, compilers and tests read as it is.
//
//go:embed runtime/dlpack_helpers.h
var helpersCode string

// Path is where the header is written, relative to the output directory.
const Path = "c/dlpack/dlpack.h"

// Backend is the C backend.
type Backend struct {
	// Schema names the schema in the header comment.
	Schema string
}

// Name is "c", the value of -lang that selects the C backend.
func (Backend) Name() string { return "c" }

func init() {
	backend.Register(backend.Registration{
		Name:     "c",
		New:      func(c backend.Config) backend.Backend { return Backend{Schema: c.Schema} },
		Headers:  true,
		Reserved: reserved,
	})
}

// Generate renders the header of api.
func (b Backend) Generate(api *ir.API) ([]backend.File, error) {
	tmpl, err := backend.ParseTemplate(templates, "templates/dlpack.h.tmpl", map[string]any{"comment": comment})
	if err != nil {
		return nil, err
	}
	view, err := b.view(api)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, view); err != nil {
		return nil, err
	}
	helpers, err := b.helpers(api)
	if err != nil {
		return nil, err
	}
	files := []backend.File{{Path: Path, Content: buf.Bytes()}}
	if helpers != nil {
		files = append(files, backend.File{Path: HelpersPath, Content: helpers})
	}
	return files, nil
}

// The view is what the template ranges over: every decision is made here,
// the template only lays text out.
type header struct {
	Marker, License, Title, Schema, Guard string
	Macros                                []macro
	Decls                                 []decl
	ABIs                                  []abiGuards
	Backports                             bool // some decl has a Backport
}

type macro struct {
	Name, Kind, Doc, Value string
}

type decl struct {
	Kind, Name, Tag, Doc, CXXBase, Decl string
	NoTypedef                           bool // a struct declared by its tag only
	// Backport is, for a struct declared by its tag only, the release
	// whose header adds its typedef ("" when none does).
	Backport string
	Members  []member
}

type member struct{ Name, Doc, Decl string }

func (b Backend) view(api *ir.API) (header, error) {
	h := header{Marker: backend.Marker, License: backend.SPDX, Title: api.Version().Title(), Schema: b.Schema, Guard: api.HeaderGuard}
	for _, m := range api.Macros {
		mv := macro{Name: m.Name, Doc: m.Doc}
		switch m.Kind {
		case ir.MacroExternC:
			mv.Kind = "extern_c"
		case ir.MacroDLL:
			mv.Kind = "dll"
		default:
			mv.Kind = "value"
			mv.Value = fmt.Sprint(m.Value)
		}
		h.Macros = append(h.Macros, mv)
	}
	for _, d := range api.Decls {
		switch d := d.(type) {
		case *ir.Struct:
			v := decl{Kind: "struct", Name: d.Name, Tag: d.Tag, Doc: d.Doc, NoTypedef: !d.Typedef(api.Version())}
			if v.NoTypedef && d.TypedefSince != nil {
				v.Backport = d.TypedefSince.String()
				h.Backports = true
			}
			for _, f := range d.Fields {
				v.Members = append(v.Members, member{Name: f.Name, Doc: f.Doc, Decl: f.Type.C(f.Name)})
			}
			h.Decls = append(h.Decls, v)
		case *ir.Enum:
			v := decl{Kind: "enum", Name: d.Name, Doc: d.Doc, CXXBase: d.CXXBase}
			suffix := ""
			if d.UnsignedLiterals {
				suffix = "U"
			}
			for i, e := range d.Values {
				// No comma after the last enumerator: C89 and C++98 refuse one.
				sep := ","
				if i == len(d.Values)-1 {
					sep = ""
				}
				v.Members = append(v.Members, member{Name: e.Name, Doc: e.Doc, Decl: fmt.Sprintf("%s = %d%s%s", e.Name, e.Value, suffix, sep)})
			}
			h.Decls = append(h.Decls, v)
		case *ir.Flags:
			v := decl{Kind: "flags", Name: d.Name, Doc: d.Doc}
			for _, f := range d.Bits {
				v.Members = append(v.Members, member{Name: f.Name, Doc: f.Doc, Decl: fmt.Sprintf("(1UL << %dUL)", f.Bit)})
			}
			h.Decls = append(h.Decls, v)
		case *ir.FuncType:
			h.Decls = append(h.Decls, decl{Kind: "functype", Name: d.Name, Doc: d.Doc, Decl: d.Sig.C("(*" + d.Name + ")")})
		}
	}
	guards, err := layoutGuards(api)
	if err != nil {
		return header{}, err
	}
	h.ABIs = guards
	return h, nil
}

// comment renders doc as a C comment block at the given indent, or nothing
// when doc is empty.
func comment(indent, doc string) string {
	lines := backend.Wrap(doc, 76-len(indent))
	switch len(lines) {
	case 0:
		return ""
	case 1:
		return indent + "/*! " + lines[0] + " */"
	}
	var b strings.Builder
	b.WriteString(indent + "/*!\n")
	for _, l := range lines {
		b.WriteString(indent + " * " + l + "\n")
	}
	b.WriteString(indent + " */")
	return b.String()
}
