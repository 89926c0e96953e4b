package python

import (
	"embed"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strings"

	"github.com/dlgen/dlgen/internal/backend"
)

// The hand-written sources in internal/backend/python/runtime, the same for every release. dlgen
// never edits them: a Python source (.py, .pyi) goes into a generated module
// or stub after the declarations, verbatim but for its import lines, which
// join the file's import block; a Cython source (.pxi) is shipped beside the
// .pyx and .pxd as it is, behind the marker lines, and included by them.
//
//go:embed runtime/*.py runtime/*.pyi runtime/*.pxi
var runtimeFiles embed.FS

// sources are the hand-written sources, by file name.
var sources = func() fs.FS {
	sub, err := fs.Sub(runtimeFiles, "runtime")
	if err != nil {
		panic(err) // a constant path: cannot fail
	}
	return sub
}()

// pythonSource is a hand-written Python source as a module or stub takes
// it: the modules it imports, and the rest of its text.
type pythonSource struct {
	name    string
	imports []string
	text    string
}

var (
	importLine = regexp.MustCompile(`^import ([\w.]+)$`)
	anyImport  = regexp.MustCompile(`(?m)^(import|from) `)
)

// readPython reads internal/backend/python/runtime/name: a comment, then its imports, `import
// module` one a line, then its code. Its imports are lifted into the
// generated file's import block; an import anywhere else at the top level
// (a from-import, say, which could not be merged with another source's) is
// an error.
func readPython(name string) (pythonSource, error) {
	data, err := fs.ReadFile(sources, name)
	if err != nil {
		return pythonSource{}, err
	}
	return splitPython(name, string(data))
}

// splitPython separates the imports of internal/backend/python/runtime/name, whose text is data,
// from the rest.
func splitPython(name, data string) (pythonSource, error) {
	lines := strings.Split(data, "\n")
	head := 0
	for head < len(lines) && strings.HasPrefix(lines[head], "#") {
		head++
	}
	end := head
	src := pythonSource{name: name}
	for ; end < len(lines); end++ {
		m := importLine.FindStringSubmatch(lines[end])
		if m == nil {
			break
		}
		src.imports = append(src.imports, m[1])
	}
	src.text = strings.TrimRight(strings.Join(append(lines[:head:head], lines[end:]...), "\n"), "\n")
	if loc := anyImport.FindStringIndex(src.text); loc != nil {
		line := strings.Count(src.text[:loc[0]], "\n") + 1 + end - head
		return src, fmt.Errorf("internal/backend/python/runtime/%s:%d: an import after the code: imports are `import module` lines right after the opening comment", name, line)
	}
	return src, nil
}

// readCython reads internal/backend/python/runtime/name as dlgen ships it: its marker lines first.
func readCython(name string) (string, error) {
	data, err := fs.ReadFile(sources, name)
	if err != nil {
		return "", err
	}
	return "# " + backend.Marker + "\n# " + backend.SPDX + "\n" + string(data), nil
}

// importBlock lists the modules of a generated file's import block, each
// once, in the order isort (and ruff) want: its declarations' own and those
// of its hand-written sources.
func importBlock(own []string, srcs []pythonSource) []string {
	set := map[string]bool{}
	for _, m := range own {
		set[m] = true
	}
	for _, s := range srcs {
		for _, m := range s.imports {
			set[m] = true
		}
	}
	var modules []string
	for m := range set {
		modules = append(modules, m)
	}
	sort.Strings(modules)
	return modules
}

// Verbatim maps each hand-written source, by path in the repository, to
// the text of it that dlgen copies unchanged into its output: a Cython
// source as it is, a Python source without its import lines (shared.py is
// both), so that golden files can name the sources instead of repeating
// them (package backendtest).
func (Backend) Verbatim() map[string]string {
	out := map[string]string{}
	entries, _ := fs.ReadDir(sources, ".")
	for _, e := range entries {
		name, path := e.Name(), "internal/backend/python/runtime/"+e.Name()
		if strings.HasSuffix(name, ".py") || strings.HasSuffix(name, ".pyi") {
			if src, err := readPython(name); err == nil && len(src.imports) > 0 {
				out[path+" without its import lines"] = src.text
			} else if err == nil {
				out[path] = src.text
			}
		}
	}
	for _, name := range append(append(pyxIncludes(true), pyxIncludes(false)...), pxdIncludes...) {
		if data, err := fs.ReadFile(sources, name); err == nil {
			out["internal/backend/python/runtime/"+name] = string(data)
		}
	}
	return out
}
