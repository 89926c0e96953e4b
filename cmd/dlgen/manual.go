package main

import (
	_ "embed"
	"go/doc"
	"go/parser"
	"go/token"
)

// docSource is this command's package doc, the manual: `dlgen -help`
// prints it as `go doc` does, so that it reads the same where go doc
// cannot find the package (outside a module that requires dlgen).
//
//go:embed doc.go
var docSource string

// manual is the package doc of docSource as go doc renders it: text,
// code blocks indented four spaces, wrapped at 80 columns.
// (doc.go is package main's only file with a doc comment.)
func manual() string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "doc.go", docSource, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil || f.Doc == nil {
		panic("cmd/dlgen: doc.go has no package doc") // the build embeds it; a test reads it
	}
	p, err := doc.NewFromFiles(fset, nil, "github.com/dlgen/dlgen/cmd/dlgen")
	if err != nil {
		panic(err)
	}
	pr := p.Printer()
	pr.TextCodePrefix = "    " // as go doc indents code
	return string(pr.Text(p.Parser().Parse(f.Doc.Text())))
}
