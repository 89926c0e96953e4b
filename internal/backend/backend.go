// Package backend defines the interface every language backend implements:
// render one resolved ir.API into files. Backends are pure functions of
// their input, so their output is deterministic and easy to golden-test.
// Each backend is one folder, internal/backend/<lang>: its Go code, its
// text templates (templates/, declarations only), the hand-written sources
// it ships unchanged into users' processes (runtime/, the same for every
// release) and its goldens (testdata/).
// Each backend registers itself (Register) with its name and its own
// flags; the driver (package generate) asks the registry.
package backend

import (
	"fmt"
	"io/fs"
	"path"
	"strings"
	"text/template"
	"unicode/utf8"

	"github.com/dlgen/dlgen"
	"github.com/dlgen/dlgen/internal/ir"
)

// File is one generated file, its Path slash-separated and relative to the
// output directory.
type File struct {
	Path    string // where the file goes, such as "c/dlpack/dlpack.h"
	Content []byte // the whole file, marker line first
	// Seed marks a file written only where there is none, outside the
	// directories dlgen owns (the __init__.py of a package dlgen writes
	// into): a file already there, whatever it holds, is the user's.
	Seed bool
}

// Backend renders an API in one language.
type Backend interface {
	// Name is the value of -lang that selects the backend.
	Name() string
	// Generate renders api. An element of the schema the backend cannot
	// render is an *Error at the element's position. Errors do not name
	// the backend: the driver does.
	Generate(api *ir.API) ([]File, error)
}

// Error is an element of the schema that a backend refuses to render (a
// value its language cannot hold, say), at the element's position. The
// driver reports it as a schema error: file:line:col: message, exit 2.
type Error struct {
	Pos ir.Pos // where the schema declares the element
	Msg string // what the backend cannot render, without the position
}

// Error is the message as the driver prints it: file:line:col: message.
func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }

// Errorf returns an *Error at pos.
func Errorf(pos ir.Pos, format string, args ...any) error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// HeaderUser is a Backend whose output is compiled against the C headers
// (the Cython module includes them). The driver renders the headers of the
// backend registered with Headers (the C backend's) and places a copy of each (dlpack.h at Header(api), the helper
// header beside it), "" for none in that release, so that no backend runs
// another and each language's output stands alone.
type HeaderUser interface {
	// Header is where the copy of api's C header goes, relative to the
	// output directory, or "" when the backend needs none for api.
	Header(api *ir.API) string
}

// ReferenceUser is a Backend that ships the Python backend's ctypes module
// as its reference declarations (the conformance kit does). The driver
// renders the backend registered with a Reference and places a copy of that
// file at Reference(api), as it places the C header for a HeaderUser.
type ReferenceUser interface {
	// Reference is where the copy of api's dlpack_ctypes.py goes, relative
	// to the output directory.
	Reference(api *ir.API) string
}

// BuildChecker is a Backend whose output users compile in place (the
// Cython module): -check also reports a build product under the output
// directory that was built from other sources than those the run writes.
type BuildChecker interface {
	// StaleBuilds lists, one line each, the build products in out (the
	// output directory, named name in the lines) not built from files,
	// the backend's own, each with the command that rebuilds it.
	StaleBuilds(out fs.FS, name string, files []File) ([]string, error)
}

// Marker is the first line of every generated file, in that file's comment
// syntax: dlgen.Marker, which matches Go's rule for generated code.
const Marker = dlgen.Marker

// SPDX is the second line of every generated file: its licence, DLPack's
// own (Apache-2.0, like the repository's LICENSE), so that a framework that
// vendors a generated file in place of upstream's dlpack.h cites the same
// licence as before.
const SPDX = "SPDX-License-Identifier: Apache-2.0"

// Wrap breaks text into lines of at most width runes, at spaces; a word
// longer than width gets a line of its own.
func Wrap(text string, width int) []string {
	var lines []string
	line, runes := "", 0
	for _, w := range strings.Fields(text) {
		n := utf8.RuneCountInString(w)
		if line != "" && runes+1+n > width {
			lines = append(lines, line)
			line, runes = "", 0
		}
		if line != "" {
			line += " "
			runes++
		}
		line += w
		runes += n
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// ParseTemplate parses the template name of a backend's embedded templates
// (files, a path such as "templates/dlpack.h.tmpl"), with funcs available to
// it and the templates in shared, whose blocks it may use. Templates are
// named by their file name, as ParseFS names them; a missing key is an
// error.
func ParseTemplate(files fs.FS, name string, funcs template.FuncMap, shared ...string) (*template.Template, error) {
	return template.New(path.Base(name)).Funcs(funcs).Option("missingkey=error").ParseFS(files, append([]string{name}, shared...)...)
}
