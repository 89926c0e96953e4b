package dlgen_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dlgen/dlgen/internal/backend/golang"
	"github.com/dlgen/dlgen/internal/schema"
)

// Every exported identifier of every package in this module has a doc
// comment, generated/go/dlpack included (its backend writes them): funcs,
// methods of exported types, types, constants, variables, and the exported
// fields and methods of exported structs and interfaces. Every file is
// read whatever its build constraints, so code for other platforms and for
// cgo counts too. A constant or variable may share the doc comment of its
// parenthesized group, as go doc shows it; a field or interface method may
// carry its comment at the end of its line.
func TestEveryExportedIdentifierIsDocumented(t *testing.T) {
	var missing []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules" || isModule(path)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if f.Doc == nil && f.Name.Name != "main" && !packageDocumented(path, f.Name.Name) {
			missing = append(missing, filepath.Dir(path)+": package "+f.Name.Name)
		}
		for _, name := range undocumented(f) {
			missing = append(missing, fset.Position(name.Pos()).String()+": "+name.Name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(missing)
	for _, m := range slices.Compact(missing) {
		t.Errorf("%s has no doc comment", m)
	}
}

// The Go backend documents every exported identifier it writes, in every
// release of the embedded schema (generated/go/dlpack, checked above, is
// only the newest).
func TestGeneratedGoIsDocumentedInEveryRelease(t *testing.T) {
	s, err := schema.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range s.Releases {
		files, err := golang.Backend{Schema: schema.DefaultFile}.Generate(s.At(r.Version))
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		for _, file := range files {
			if !strings.HasSuffix(file.Path, ".go") {
				continue
			}
			f, err := parser.ParseFile(fset, r.Version.String()+"/"+file.Path, file.Content, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			if f.Doc == nil && file.Path == golang.Dir+"/"+golang.Package+".go" {
				t.Errorf("%s: package %s has no doc comment", fset.File(f.Pos()).Name(), f.Name.Name)
			}
			for _, name := range undocumented(f) {
				t.Errorf("%s: %s has no doc comment", fset.Position(name.Pos()), name.Name)
			}
		}
	}
}

// isModule reports whether dir holds a module of its own (not this one).
func isModule(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "go.mod"))
	return err == nil
}

// packageDocumented reports whether some non-test file beside path documents
// package pkg.
func packageDocumented(path, pkg string) bool {
	files, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "*.go"))
	for _, other := range files {
		if strings.HasSuffix(other, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), other, nil, parser.PackageClauseOnly|parser.ParseComments)
		if err == nil && f.Name.Name == pkg && f.Doc != nil {
			return true
		}
	}
	return false
}

// undocumented returns the exported names in f that lack a doc comment.
func undocumented(f *ast.File) []*ast.Ident {
	var out []*ast.Ident
	for _, decl := range f.Decls {
		switch decl := decl.(type) {
		case *ast.FuncDecl:
			if decl.Name.IsExported() && receiverExported(decl) && decl.Doc == nil {
				out = append(out, decl.Name)
			}
		case *ast.GenDecl:
			for _, spec := range decl.Specs {
				switch spec := spec.(type) {
				case *ast.TypeSpec:
					if !spec.Name.IsExported() {
						continue
					}
					if spec.Doc == nil && (decl.Lparen.IsValid() || decl.Doc == nil) {
						out = append(out, spec.Name)
					}
					out = append(out, undocumentedMembers(spec.Type)...)
				case *ast.ValueSpec:
					documented := spec.Doc != nil || spec.Comment != nil || decl.Doc != nil
					for _, name := range spec.Names {
						if name.IsExported() && !documented {
							out = append(out, name)
						}
					}
				}
			}
		}
	}
	return out
}

// undocumentedMembers returns the exported fields of a struct, or methods of
// an interface, that have neither a doc comment nor a line comment.
func undocumentedMembers(typ ast.Expr) []*ast.Ident {
	var list *ast.FieldList
	switch typ := typ.(type) {
	case *ast.StructType:
		list = typ.Fields
	case *ast.InterfaceType:
		list = typ.Methods
	default:
		return nil
	}
	var out []*ast.Ident
	for _, field := range list.List {
		if field.Doc != nil || field.Comment != nil {
			continue
		}
		for _, name := range field.Names {
			if name.IsExported() {
				out = append(out, name)
			}
		}
	}
	return out
}

// receiverExported reports whether fn is a function, or a method of an
// exported type (methods of unexported types are not in the API).
func receiverExported(fn *ast.FuncDecl) bool {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return true
	}
	typ := fn.Recv.List[0].Type
	for {
		switch t := typ.(type) {
		case *ast.StarExpr:
			typ = t.X
		case *ast.IndexExpr:
			typ = t.X
		case *ast.IndexListExpr:
			typ = t.X
		case *ast.ParenExpr:
			typ = t.X
		case *ast.Ident:
			return t.IsExported()
		default:
			return true
		}
	}
}
