package python

import (
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dlgen/dlgen/internal/schema"
)

func TestReadPythonLiftsTheImportsAfterTheOpeningComment(t *testing.T) {
	src, err := readPython("shared.py")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(src.imports, " ") != "datetime operator sys typing" {
		t.Errorf("imports = %q", src.imports)
	}
	if !strings.HasPrefix(src.text, "# The rules") || !strings.Contains(src.text, " it calls.\n\n\nclass DataType(") {
		t.Errorf("the opening comment, then the code: %.600q", src.text)
	}
}

func TestSplitPythonRefusesAnImportAfterTheCode(t *testing.T) {
	for _, late := range []string{"# late\nimport os\n\nx = 1\nfrom sys import argv\n", "# late\nimport os\n\nx = 1\nimport sys\n"} {
		if _, err := splitPython("late.py", late); err == nil || !strings.Contains(err.Error(), "internal/backend/python/runtime/late.py:5: an import after the code") {
			t.Errorf("splitPython(%q) = %v", late, err)
		}
	}
	if _, err := splitPython("ok.py", "# ok\nimport os\n\n\ndef f():\n    import sys\n"); err != nil {
		t.Errorf("an import in a function: %v", err)
	}
}

// Every hand-written Python source keeps to the layout readPython lifts
// imports from.
func TestEveryPythonSourceHasItsImportsUpFront(t *testing.T) {
	entries, err := fs.ReadDir(sources, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".py") || strings.HasSuffix(e.Name(), ".pyi") {
			if _, err := readPython(e.Name()); err != nil {
				t.Error(err)
			}
		}
	}
}

func TestImportBlockListsEachModuleOnceSorted(t *testing.T) {
	got := importBlock([]string{"enum", "ctypes"}, []pythonSource{{imports: []string{"typing", "ctypes"}}, {imports: []string{"collections.abc"}}})
	if strings.Join(got, " ") != "collections.abc ctypes enum typing" {
		t.Errorf("importBlock = %q", got)
	}
}

func TestSortAllPutsConstantsThenClassesThenTheRest(t *testing.T) {
	got := sortAll([]string{"to_managed", "Tensor", "DLPACK_MAJOR_VERSION", "DLDevice", "CAPSULE_NAME"})
	if strings.Join(got, " ") != "CAPSULE_NAME DLPACK_MAJOR_VERSION DLDevice Tensor to_managed" {
		t.Errorf("sortAll = %q", got)
	}
}

// Verbatim names each hand-written source with the text the output holds
// unchanged: a Cython source as it is, a Python source without its import
// lines.
func TestVerbatimIsTheSourcesAsTheOutputHoldsThem(t *testing.T) {
	imports := regexp.MustCompile(`(?m)^import [\w.]+\n`)
	s, err := schema.Default()
	if err != nil {
		t.Fatal(err)
	}
	var output strings.Builder
	for _, r := range s.Releases {
		files, err := Backend{}.Generate(s.At(r.Version))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			output.Write(f.Content)
		}
	}
	for path, text := range (Backend{}).Verbatim() {
		name := strings.TrimPrefix(strings.TrimSuffix(path, " without its import lines"), "internal/backend/python/runtime/")
		data, err := fs.ReadFile(sources, name)
		if err != nil {
			t.Fatal(err)
		}
		want := string(data)
		if name != path[len("internal/backend/python/runtime/"):] {
			want = strings.TrimRight(imports.ReplaceAllString(want, ""), "\n")
		}
		if strings.TrimRight(text, "\n") != strings.TrimRight(want, "\n") {
			t.Errorf("%s: not the source as it is", path)
		}
		if !strings.Contains(output.String(), text) {
			t.Errorf("%s is in no release's output", path)
		}
	}
}

// A vendored package finds its own declarations relatively: no cimport of
// a top-level dlpack in any release.
func TestPackageCimportsItsOwnDeclarationsRelatively(t *testing.T) {
	s, err := schema.Default()
	if err != nil {
		t.Fatal(err)
	}
	absolute := regexp.MustCompile(`(?m)^(cimport dlpack|from dlpack(_cython)? cimport)`)
	relative := regexp.MustCompile(`(?m)^(from \. cimport dlpack|from \.dlpack cimport)`)
	for _, r := range s.Releases {
		for _, pkg := range []string{"", "mylib._vendor.python"} {
			files, err := Backend{Package: pkg}.Generate(s.At(r.Version))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range files {
				if abs, rel := absolute.Match(f.Content), relative.Match(f.Content); (pkg != "" && abs) || (pkg == "" && rel) {
					t.Errorf("v%s %s (package %q) cimports its declarations the other way", r.Version, f.Path, pkg)
				}
			}
		}
	}
}

// -python-package python makes python/ a top-level package: its own
// __init__.py, and none written around it.
func TestTopLevelPackagePython(t *testing.T) {
	s, err := schema.Default()
	if err != nil {
		t.Fatal(err)
	}
	files, err := Backend{Package: "python"}.Generate(s.At(s.Releases[len(s.Releases)-1].Version))
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	if !slices.Contains(paths, "python/__init__.py") || slices.Contains(paths, "__init__.py") {
		t.Errorf("-python-package python writes %v", paths)
	}
}

func TestCheckPackage(t *testing.T) {
	for _, ok := range []string{"python", "mylib._vendor.python", "a1.b_2.python"} {
		if err := CheckPackage(ok); err != nil {
			t.Errorf("CheckPackage(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "mylib", "mylib._vendor", ".python", "mylib..python", "1lib.python", "my-lib.python", "class.python", "mylib.python."} {
		if err := CheckPackage(bad); err == nil {
			t.Errorf("CheckPackage(%q) accepted", bad)
		}
	}
}

// A message's text becomes string literals no wider than asked that
// concatenate to it, broken after spaces.
func TestPiecesSplitsAMessageAfterSpaces(t *testing.T) {
	text := "strides is NULL for a {ndim}-dimensional tensor of DLPack {major}.{minor}, which DLPack {from_major}.{from_minor} and later forbid"
	got := pieces(text, 40)
	var joined strings.Builder
	for _, p := range got {
		if len(p) > 40 || !strings.HasPrefix(p, `"`) {
			t.Errorf("piece %s: wider than 40 or not a literal", p)
		}
		joined.WriteString(strings.Trim(p, `"`))
	}
	if joined.String() != text || len(got) < 4 {
		t.Errorf("pieces = %q", got)
	}
	if got := pieces("short", 40); len(got) != 1 || got[0] != `"short"` {
		t.Errorf("pieces(short) = %q", got)
	}
}
