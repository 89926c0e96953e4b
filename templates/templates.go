// Package templates embeds the text templates of the template-driven
// backends (C, Python and Rust). The Go backend builds its output with jennifer.
package templates

import (
	"embed"
	"text/template"
)

//go:embed *.tmpl
var files embed.FS

// Parse parses the named template with funcs available to it, and the
// templates in shared, whose blocks it may use.
func Parse(name string, funcs template.FuncMap, shared ...string) (*template.Template, error) {
	return template.New(name).Funcs(funcs).Option("missingkey=error").ParseFS(files, append([]string{name}, shared...)...)
}
