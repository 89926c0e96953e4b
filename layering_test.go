package dlgen_test

import (
	"bytes"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNoProductionPackageImportsATestPackage: code outside tests/ that is
// not a test imports nothing under tests/: what a runtime, the generator or
// the kit needs (the conformance corpus, say) lives beside it.
func TestNoProductionPackageImportsATestPackage(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (path == "tests" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != "."):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, "github.com/dlgen/dlgen/tests/") {
				t.Errorf("%s imports the test package %s", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestTheMapIsTrue: docs/contributing.md's map lists, per layer, the folders
// of dlgen its Go packages may import besides their own; every import of
// every package outside tests/ that is not a test is one of them, every
// package lies in a layer, and every path the map and its "where to go"
// table name exists.
func TestTheMapIsTrue(t *testing.T) {
	page := readText(t, "docs/contributing.md")
	_, section, ok := strings.Cut(page, "\n## The map\n")
	if !ok {
		t.Fatal(`docs/contributing.md has no "The map" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	path := regexp.MustCompile("`([^`]+)`")
	type layer struct{ name, folders, imports []string }
	var layers []layer
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if !strings.HasPrefix(line, "|") || strings.HasPrefix(line, "|---") || len(cells) < 2 {
			continue
		}
		for _, m := range path.FindAllStringSubmatch(line, -1) {
			p := strings.ReplaceAll(m[1], "<lang>", "c")
			looksLikeAPath := strings.Contains(p, "/") || strings.HasSuffix(p, ".go") || strings.HasSuffix(p, ".md") || strings.HasSuffix(p, ".yaml")
			if !looksLikeAPath || strings.ContainsAny(p, " (") {
				continue // a name or a command
			}
			if _, err := os.Stat(strings.TrimSuffix(p, "/")); err != nil {
				t.Errorf("the map names %s, which does not exist", p)
			}
		}
		if len(cells) == 4 && strings.TrimSpace(cells[0]) != "layer" {
			folders := path.FindAllStringSubmatch(cells[1], -1)
			imports := path.FindAllStringSubmatch(cells[3], -1)
			l := layer{name: []string{strings.TrimSpace(cells[0])}}
			for _, f := range folders {
				l.folders = append(l.folders, f[1])
			}
			for _, f := range imports {
				l.imports = append(l.imports, f[1])
			}
			layers = append(layers, l)
		}
	}
	if len(layers) < 8 {
		t.Fatalf("the map has %d layers", len(layers))
	}
	// dir is the folder a file path names: the root's files stand for ".".
	dir := func(p string) string {
		if strings.HasSuffix(p, ".go") && !strings.Contains(p, "/") {
			return "."
		}
		return strings.TrimSuffix(p, "/")
	}
	within := func(pkg, folder string) bool {
		folder = dir(folder)
		return pkg == folder || folder != "." && strings.HasPrefix(pkg, folder+"/")
	}
	layerOf := func(pkg string) (layer, bool) {
		best, found, length := layer{}, false, -1
		for _, l := range layers {
			for _, f := range l.folders {
				if within(pkg, f) && len(dir(f)) > length {
					best, found, length = l, true, len(dir(f))
				}
			}
		}
		return best, found
	}
	const module = "github.com/dlgen/dlgen"
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (p == "tests" || p == "out" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && p != "."):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go"):
			return nil
		}
		pkg := filepath.ToSlash(filepath.Dir(p))
		l, ok := layerOf(pkg)
		if !ok {
			t.Errorf("%s lies in no layer of the map", pkg)
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			if ip != module && !strings.HasPrefix(ip, module+"/") {
				continue
			}
			rel := strings.TrimPrefix(strings.TrimPrefix(ip, module), "/")
			if rel == "" {
				rel = "."
			}
			allowed := false
			for _, f := range append(append([]string{}, l.folders...), l.imports...) {
				if within(rel, f) {
					allowed = true
				}
			}
			if !allowed {
				t.Errorf("%s (%s) imports %s, which the map does not let it", p, l.name[0], rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCheckedInOutputIsUnder30Percent: what dlgen writes (generated/, the
// backends' goldens) and what it records (the conformance matrix, the
// benchmark plots) stay under 30% of the tracked lines, counted as
// docs/contributing.md's table counts them.
func TestCheckedInOutputIsUnder30Percent(t *testing.T) {
	list, err := exec.Command("git", "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	golden := regexp.MustCompile(`^internal/backend/[^/]+/testdata/`)
	var total, output int
	for _, path := range strings.Split(strings.TrimRight(string(list), "\x00"), "\x00") {
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in this work tree, not yet in the index
		}
		require.NoError(t, err)
		lines := bytes.Count(data, []byte("\n"))
		total += lines
		if strings.HasPrefix(path, "generated/") || golden.MatchString(path) ||
			strings.HasPrefix(path, "docs/conformance-matrix") || strings.HasPrefix(path, "docs/bench/") {
			output += lines
		}
	}
	share := float64(output) / float64(total)
	t.Logf("output: %d of %d lines (%.1f%%)", output, total, 100*share)
	if share >= 0.30 {
		t.Errorf("checked-in output is %.1f%% of the tracked lines (%d of %d): 30%% at most", 100*share, output, total)
	}
}

// TestNoGoFunctionIsLong: no function outside tests is over 80 lines, so
// that each reads as one thing (docs/contributing.md, "Changing dlgen").
func TestNoGoFunctionIsLong(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (d.Name() == "testdata" || d.Name() == "out" || strings.HasPrefix(d.Name(), ".") && path != "."):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok {
				if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > 80 {
					t.Errorf("%s: %s is %d lines (80 at most)", fset.Position(fn.Pos()), fn.Name.Name, n)
				}
			}
		}
		return nil
	})
	require.NoError(t, err)
}
