// Package backend defines the interface every language backend implements:
// render one resolved ir.API into files. Backends are pure functions of
// their input, so their output is deterministic and easy to golden-test.
package backend

import (
	"strings"

	"github.com/dlgen/dlgen"
	"github.com/dlgen/dlgen/ir"
)

// File is one generated file, its Path slash-separated and relative to the
// output directory.
type File struct {
	Path    string
	Content []byte
}

// Backend renders an API in one language.
type Backend interface {
	// Name is the value of -lang that selects the backend.
	Name() string
	Generate(api *ir.API) ([]File, error)
}

// HeaderUser is a Backend whose output is compiled against the C header
// (the Cython module includes it). The driver renders the C backend's
// header and places a copy at Header(api), "" for none in that release, so
// that no backend runs another and each language's output stands alone.
type HeaderUser interface {
	Header(api *ir.API) string
}

// Marker is the first line of every generated file, in that file's comment
// syntax: dlgen.Marker, which matches Go's rule for generated code.
const Marker = dlgen.Marker

// SPDX is the second line of every generated file: its licence, DLPack's
// own (Apache-2.0, like the repository's LICENSE), so that a framework that
// vendors a generated file in place of upstream's dlpack.h cites the same
// licence as before.
const SPDX = "SPDX-License-Identifier: Apache-2.0"

// Wrap breaks text into lines of at most width runes, at spaces.
func Wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
