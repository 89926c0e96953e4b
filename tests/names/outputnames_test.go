package names

import (
	"flag"
	"fmt"
	"go/format"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/dlgen/dlgen/internal/generate"
	"github.com/dlgen/dlgen/internal/ir"
	"github.com/dlgen/dlgen/internal/schema"
	"github.com/dlgen/dlgen/tests/internal/tooltest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// outputLists says, per language dlgen writes, which of its files are
// that language's code and which schema names share a scope with the
// names those files use. Go is not here: the Go backend maps schema names
// to Go names and refuses a collision with one it writes itself, at the
// schema element (TestGoNamesDlgenWritesAreRefusedAtTheDeclaration).
var update = flag.Bool("update", false, "rewrite each backend's output_names.go from the output")

var outputLists = []struct {
	dir, lang, kind string   // dir: the backend folder the list is registered by
	exts            []string // the files, by extension; none: the C standard headers they include
	on              ir.NameKind
	syntax          syntax
}{
	// C: macros, typedefs, tags and enumerators share the file scope of
	// the headers and of whatever includes them.
	{"c", "C", "name dlgen's C headers use or declare", []string{".h"}, ir.TypeName | ir.EnumeratorName | ir.MacroName, cSyntax},
	// ... and so do the names the standard headers they include declare
	// (ptrdiff_t, SIZE_MAX, strlen), as gcc and glibc declare them.
	{"c", "C", "name a standard header dlgen's C headers include declares", nil, ir.TypeName | ir.EnumeratorName | ir.MacroName, cSyntax},
	// Python: types and macros are module-level names of the ctypes
	// module; enumerators are enum.IntEnum members.
	{"python", "Python", "name dlgen's Python modules use or declare", []string{".py", ".pyi"}, ir.TypeName | ir.MacroName, pythonSyntax},
	// Cython: a cdef extern enum's enumerators are module-level too.
	{"python", "Cython", "name dlgen's Cython module uses or declares", []string{".pyx", ".pxd", ".pxi"}, ir.TypeName | ir.EnumeratorName | ir.MacroName, pythonSyntax},
	// Rust: types and macros (consts) are items of the crate's modules;
	// enumerators are associated consts.
	{"rust", "Rust", "name dlgen's Rust crate uses or declares", []string{".rs"}, ir.TypeName | ir.MacroName, rustSyntax},
}

// TestReservedOutputNamesAreWhatTheOutputUses: the lists each backend
// registers as its output's names (ir.Reserved's Output), the names
// each language's output uses or declares itself (int64_t, memcpy,
// dlgen_error, DLGEN_OK; ctypes, sys, math; c_int, Option, rules), which
// a schema name of the same scope would shadow or redeclare, are exactly
// the identifiers of dlgen's output for every release of the default
// schema, less the schema's own names, the language's keywords and the
// patterns already reserved, and the names the standard headers the C
// output includes declare. go test ./tests/names -update rewrites each
// backend's output_names.go.
func TestReservedOutputNamesAreWhatTheOutputUses(t *testing.T) {
	s, err := schema.Default()
	require.NoError(t, err)
	schemaNames := schemaNames(s)
	used := make([]map[string]bool, len(outputLists))
	for i := range used {
		used[i] = map[string]bool{}
	}
	includes := map[string]bool{}
	for _, r := range s.Releases {
		files, err := generate.Files(generate.Options{Schema: s, Version: r.Version, Langs: []string{"c", "python", "rust"}})
		require.NoError(t, err)
		for _, f := range files {
			if path.Ext(f.Path) == ".h" {
				for _, m := range includeRE.FindAllStringSubmatch(string(f.Content), -1) {
					includes[m[1]] = true
				}
			}
			for i, l := range outputLists {
				if !containsExt(l.exts, path.Ext(f.Path)) {
					continue
				}
				for _, id := range l.syntax.identifiers(string(f.Content)) {
					if !schemaNames[id] && !reservedElsewhere(id, l.on) {
						used[i][id] = true
					}
				}
			}
		}
	}
	for i, l := range outputLists {
		if l.exts == nil {
			for _, id := range l.syntax.identifiers(standardHeaders(t, includes)) {
				if !strings.HasPrefix(id, "_") && !schemaNames[id] && !reservedElsewhere(id, l.on) && !used[0][id] {
					used[i][id] = true
				}
			}
		}
	}
	var want []ir.Reserved
	for i, l := range outputLists {
		words := make([]string, 0, len(used[i]))
		for w := range used[i] {
			if !schemaNames[w] {
				words = append(words, w)
			}
		}
		sort.Strings(words)
		want = append(want, ir.Reserved{Lang: l.lang, Kind: l.kind, On: l.on, Output: true, Words: strings.Join(words, " ")})
	}
	if *update {
		byDir := map[string][]ir.Reserved{}
		for i, l := range outputLists {
			byDir[l.dir] = append(byDir[l.dir], want[i])
		}
		for dir, lists := range byDir {
			path := filepath.Join(tooltest.Root(), "internal", "backend", dir, "output_names.go")
			require.NoError(t, os.WriteFile(path, outputNamesSource(t, dir, lists), 0o644))
		}
		return
	}
	output := outputNames()
	require.Len(t, output, len(want))
	for i, w := range want {
		got := output[i]
		assert.Equal(t, w.Lang+" "+w.Kind, got.Lang+" "+got.Kind)
		assert.Equal(t, w.On, got.On, w.Lang)
		missing, extra := difference(strings.Fields(w.Words), strings.Fields(got.Words)), difference(strings.Fields(got.Words), strings.Fields(w.Words))
		assert.Empty(t, missing, "%s output uses these, which its backend's output_names.go lacks; run go test ./tests/names -update", w.Lang)
		assert.Empty(t, extra, "%s output no longer uses these, which its backend's output_names.go lists; run go test ./tests/names -update", w.Lang)
	}
}

// includeRE matches an #include of a standard header; Python.h, which
// only the Python modules' part of the helpers includes, declares names
// of its own prefixes (Py, _Py).
var includeRE = regexp.MustCompile(`(?m)^#include <([a-z]+\.h)>`)

// standardHeaders is the text of the standard headers includes, as gcc
// preprocesses them with their macros kept: on Linux with glibc only, as
// the table is written there, else the test is skipped.
func standardHeaders(t *testing.T, includes map[string]bool) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the table of names the standard headers declare is written from gcc and glibc, on Linux")
	}
	gcc := tooltest.Require(t, "gcc")
	var src strings.Builder
	for _, h := range slices.Sorted(maps.Keys(includes)) {
		fmt.Fprintf(&src, "#include <%s>\n", h)
	}
	cmd := exec.Command(gcc, "-E", "-dD", "-P", "-std=c11", "-x", "c", "-")
	cmd.Stdin = strings.NewReader(src.String())
	out, err := cmd.Output()
	require.NoError(t, err)
	return string(out)
}

// outputNames are the registered lists of the names the output uses.
func outputNames() []ir.Reserved {
	var out []ir.Reserved
	for _, r := range ir.ReservedWords() {
		if r.Output {
			out = append(out, r)
		}
	}
	return out
}

// reservedElsewhere reports whether a name id of kind is refused by a
// registered list other than the output's names, or by a pattern.
func reservedElsewhere(id string, kind ir.NameKind) bool {
	output := map[string]bool{}
	for _, r := range outputNames() {
		output["a "+r.Kind+" in "+r.Lang] = true
	}
	for _, why := range ir.ReservedAs(id, kind) {
		if !output[why] {
			return true
		}
	}
	return false
}

func containsExt(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// difference is what of a is not in b.
func difference(a, b []string) []string {
	in := map[string]bool{}
	for _, x := range b {
		in[x] = true
	}
	var out []string
	for _, x := range a {
		if !in[x] {
			out = append(out, x)
		}
	}
	return out
}

// outputNamesSource is a backend's output_names.go declaring lists.
func outputNamesSource(t *testing.T, pkg string, lists []ir.Reserved) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "// Code generated by go test ./tests/names -update. DO NOT EDIT.\n\npackage %s\n\n", pkg)
	b.WriteString("import \"github.com/dlgen/dlgen/internal/ir\"\n\n")
	b.WriteString("// outputNames lists the names the backend's output uses or declares\n")
	b.WriteString("// itself (a library's, a builtin, a helper of dlgen's), which a schema\n")
	b.WriteString("// name of the same scope would shadow or redeclare: the identifiers of the\n")
	b.WriteString("// output for every release of the default schema, less the schema's own\n")
	b.WriteString("// names, keywords and patterns already reserved. A test of tests/names\n")
	b.WriteString("// derives it from the output and fails when it is stale.\n")
	b.WriteString("var outputNames = []ir.Reserved{\n")
	kinds := map[ir.NameKind]string{ir.TypeName | ir.EnumeratorName | ir.MacroName: "ir.TypeName | ir.EnumeratorName | ir.MacroName", ir.TypeName | ir.MacroName: "ir.TypeName | ir.MacroName"}
	for _, l := range lists {
		require.Contains(t, kinds, l.On)
		fmt.Fprintf(&b, "\t{Lang: %q, Kind: %q, On: %s, Output: true, Words: `%s`},\n", l.Lang, l.Kind, kinds[l.On], wrapWords(l.Words))
	}
	b.WriteString("}\n")
	src, err := format.Source([]byte(b.String()))
	require.NoError(t, err)
	return src
}

// wrapWords breaks a list of words into lines of about 100 columns.
func wrapWords(words string) string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(words) {
		if line != "" && len(line)+1+len(w) > 100 {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return strings.Join(append(lines, line), "\n\t\t")
}
