// Package conformance is the backend of `dlgen -lang conformance`: it writes
// the DLPack conformance kit of a release under conformance/, a pure-Python
// package (dlpack_conformance) that tests any array library's __dlpack__ and
// from_dlpack from inside the capsule (docs/conformance-kit.md).
//
// The kit's code is hand-written and the same for every release
// (conformance); what varies by release is its reference module,
// the generated ctypes declarations (the driver places the Python backend's
// dlpack_ctypes.py at Reference), and the corpus of tensors with the
// verdicts of that release (corpus.py, from conformance/corpus/corpus.json,
// shipped when the corpus is written for the release). The directory is a
// Python project (pyproject.toml, project.go): pip installs it, and
// scripts/wheels makes the newest release's kit a wheel with the same
// metadata.
package conformance

import (
	"fmt"
	"io/fs"
	"path"
	"strings"

	kit "github.com/dlgen/dlgen/conformance"
	"github.com/dlgen/dlgen/conformance/corpus"
	"github.com/dlgen/dlgen/internal/backend"
	"github.com/dlgen/dlgen/internal/ir"
)

// Dir is where the kit is written, relative to the output directory.
const Dir = "conformance"

// Package is the kit's Python package, under Dir.
const Package = "dlpack_conformance"

func init() {
	backend.Register(backend.Registration{
		Name:       "conformance",
		New:        func(c backend.Config) backend.Backend { return Backend{Schema: c.Schema} },
		ByNameOnly: true,
	})
}

// Backend is the conformance kit's backend.
type Backend struct {
	Schema string // names the schema in the kit's files
}

// Name is "conformance", the value of -lang that selects the kit.
func (Backend) Name() string { return "conformance" }

// Reference is where the driver places the Python backend's ctypes module,
// the kit's reference declarations.
func (Backend) Reference(*ir.API) string { return Dir + "/" + Package + "/dlpack_ctypes.py" }

// Generate writes the kit of api's release. A release without the versioned
// protocol (before DLPack 1.0) has no kit: its consumers know no max_version.
func (b Backend) Generate(api *ir.API) ([]backend.File, error) {
	if !api.Versioned() {
		return nil, fmt.Errorf("DLPack %s has no versioned protocol (max_version, DLManagedTensorVersioned): the conformance kit is for DLPack 1.0 and later", api.Version())
	}
	var files []backend.File
	err := fs.WalkDir(kit.Sources, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(kit.Sources, p)
		if err != nil {
			return err
		}
		files = append(files, backend.File{Path: Dir + "/" + p, Content: marked(p, data)})
		return nil
	})
	if err != nil {
		return nil, err
	}
	files = append(files, backend.File{Path: Dir + "/pyproject.toml", Content: Pyproject(api)})
	c, raw, err := corpus.Raw()
	if err != nil {
		return nil, err
	}
	if c.Consumer == [2]uint32{uint32(api.Version().Major), uint32(api.Version().Minor)} {
		files = append(files, backend.File{Path: Dir + "/" + Package + "/corpus.py", Content: corpusModule(raw)})
	}
	return files, nil
}

// marked puts dlgen's marker and licence before a shipped file, in its
// comment syntax.
func marked(p string, data []byte) []byte {
	var head string
	switch path.Ext(p) {
	case ".md":
		head = "<!-- " + backend.Marker + " -->\n<!-- " + backend.SPDX + " -->\n\n"
	default:
		head = "# " + backend.Marker + "\n# " + backend.SPDX + "\n"
	}
	return append([]byte(head), data...)
}

// corpusModule is the corpus as a Python module (JSON cannot carry the
// marker): CORPUS, the file's object, read with json from a raw string.
func corpusModule(raw []byte) []byte {
	var b strings.Builder
	b.WriteString("# " + backend.Marker + "\n# " + backend.SPDX + "\n")
	b.WriteString("# ruff: noqa: E501 - the corpus's lines as corpus.json has them\n")
	b.WriteString(`"""The conformance corpus of this release (dlgen's conformance/corpus/corpus.json)."""` + "\n")
	b.WriteString("import json\n\nCORPUS = json.loads(r'''\n")
	b.Write(raw)
	b.WriteString("''')\n")
	return []byte(b.String())
}
