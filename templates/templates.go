// Package templates embeds the text templates of the template-driven
// backends, one folder per language (c/, python/, rust/). The Go backend
// builds its output with jennifer.
package templates

import (
	"embed"
	"path"
	"text/template"
)

//go:embed */*.tmpl
var files embed.FS

// Parse parses the named template, a path such as "c/dlpack.h.tmpl", with
// funcs available to it, and the templates in shared, whose blocks it may
// use. Templates are named by their file name, as ParseFS names them.
func Parse(name string, funcs template.FuncMap, shared ...string) (*template.Template, error) {
	return template.New(path.Base(name)).Funcs(funcs).Option("missingkey=error").ParseFS(files, append([]string{name}, shared...)...)
}
