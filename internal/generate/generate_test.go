package generate

import (
	"bytes"
	"errors"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dlgen/dlgen/internal/backend"
	_ "github.com/dlgen/dlgen/internal/backend/all"
	"github.com/dlgen/dlgen/internal/ir"
	"github.com/dlgen/dlgen/internal/schema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func defaultSchema(t testing.TB) *ir.Schema {
	s, err := schema.Default()
	require.NoError(t, err)
	return s
}

// TestCheckedInOutputIsCurrent is the CI drift check of the output the
// repository holds: generated/, as its README says to write it. (The copy
// the example framework vendors is not checked in: its test writes it.)
func TestCheckedInOutputIsCurrent(t *testing.T) {
	for _, c := range []struct {
		dir, command string
		opts         Options
	}{
		{"generated", "go run ./cmd/dlgen -out generated", Options{}},
	} {
		c.opts.Schema, c.opts.SchemaName = defaultSchema(t), schema.DefaultFile
		files, err := Files(c.opts)
		require.NoError(t, err)
		diff, err := Check(filepath.Join("..", "..", filepath.FromSlash(c.dir)), files)
		require.NoError(t, err)
		assert.Empty(t, diff, "%s is stale; run: %s", c.dir, c.command)
	}
}

func TestOutputIsDeterministic(t *testing.T) {
	s := defaultSchema(t)
	a, err := Files(Options{Schema: s})
	require.NoError(t, err)
	s2 := defaultSchema(t) // a fresh load, so no state is shared
	b, err := Files(Options{Schema: s2})
	require.NoError(t, err)
	require.Equal(t, len(a), len(b))
	for i := range a {
		assert.Equal(t, a[i].Path, b[i].Path)
		assert.True(t, bytes.Equal(a[i].Content, b[i].Content), a[i].Path)
	}
}

var goMarker = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)

func TestEveryFileCarriesTheMarker(t *testing.T) {
	files, err := Files(Options{Schema: defaultSchema(t)})
	require.NoError(t, err)
	checkout, err := filepath.Abs(filepath.Join("..", "..")) // this checkout, wherever it lies
	require.NoError(t, err)
	for _, f := range files {
		head := f.Content[:min(len(f.Content), 200)]
		assert.Contains(t, string(head), backend.Marker, f.Path)
		if filepath.Ext(f.Path) == ".go" {
			pkg := bytes.Index(f.Content, []byte("\npackage "))
			loc := goMarker.FindIndex(f.Content)
			require.NotNil(t, loc, f.Path)
			assert.Less(t, loc[0], pkg, "%s: the marker must precede the package clause", f.Path)
		}
		assert.NotContains(t, string(f.Content), checkout, "%s: no absolute path of the checkout", f.Path)
	}
}

func TestUnknownVersionListsKnownOnes(t *testing.T) {
	s := defaultSchema(t)
	var known []string
	for _, r := range s.Releases {
		known = append(known, r.Version.String())
	}
	_, err := Files(Options{Schema: s, Version: ir.Version{Major: 0, Minor: 9}})
	assert.EqualError(t, err, "unknown DLPack version 0.9 (known: "+strings.Join(known, ", ")+")")
}

func TestUnknownLanguage(t *testing.T) {
	_, err := Files(Options{Schema: defaultSchema(t), Langs: []string{"cobol"}})
	assert.ErrorContains(t, err, `unknown language "cobol"`)
}

func TestWriteTouchesOnlyChangedFiles(t *testing.T) {
	dir := t.TempDir()
	files, err := Files(Options{Schema: defaultSchema(t)})
	require.NoError(t, err)
	written, err := Write(dir, files)
	require.NoError(t, err)
	assert.Len(t, written, len(files))
	written, err = Write(dir, files)
	require.NoError(t, err)
	assert.Empty(t, written, "a second run must not rewrite anything")

	files[0].Content = append(files[0].Content, '\n')
	written, err = Write(dir, files)
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(dir, filepath.FromSlash(files[0].Path))}, written)
}

func TestCheckReportsMissingAndChangedFiles(t *testing.T) {
	dir := t.TempDir()
	files, err := Files(Options{Schema: defaultSchema(t), Langs: []string{"c"}})
	require.NoError(t, err)
	diff, err := Check(dir, files)
	require.NoError(t, err)
	assert.Contains(t, diff, "--- /dev/null")

	_, err = Write(dir, files)
	require.NoError(t, err)
	diff, err = Check(dir, files)
	require.NoError(t, err)
	assert.Empty(t, diff)

	path := filepath.Join(dir, "c", "dlpack", "dlpack.h")
	require.NoError(t, os.WriteFile(path, bytes.Replace(files[0].Content, []byte("kDLCPU = 1"), []byte("kDLCPU = 7"), 1), 0o644))
	diff, err = Check(dir, files)
	require.NoError(t, err)
	assert.Contains(t, diff, "-  kDLCPU = 7,\n+  kDLCPU = 1,\n")
}

// TestPackageInitIsASeed: with -python-package, the output directory is the
// package around python/, and Cython names the module after its full name
// only if that package has an __init__.py: dlgen writes one where there is
// none, and a user's own, whatever it holds, is current and left alone.
func TestPackageInitIsASeed(t *testing.T) {
	dir := t.TempDir()
	files, err := Files(Options{Schema: defaultSchema(t), Langs: []string{"python"}, BackendOptions: map[string]string{"python-package": "mylib._vendor.python"}})
	require.NoError(t, err)
	init := filepath.Join(dir, "__init__.py")
	diff, err := Check(dir, files)
	require.NoError(t, err)
	assert.Contains(t, diff, "--- /dev/null\n+++ "+filepath.ToSlash(init)+"\t(generated)\n")

	_, err = Write(dir, files)
	require.NoError(t, err)
	seed, err := os.ReadFile(init)
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(seed, []byte("# "+backend.Marker+"\n")), "%s", seed)
	assert.Contains(t, string(seed), `"""The package mylib._vendor, which holds dlgen's output: mylib._vendor.python.`)

	require.NoError(t, os.WriteFile(init, []byte("from .mine import *\n"), 0o644))
	written, err := Write(dir, files)
	require.NoError(t, err)
	assert.Empty(t, written)
	diff, err = Check(dir, files)
	require.NoError(t, err)
	assert.Empty(t, diff)
	mine, err := os.ReadFile(init)
	require.NoError(t, err)
	assert.Equal(t, "from .mine import *\n", string(mine))
}

// Backends find what they need by role: renaming DLPACK_MINOR_VERSION once
// made the Python backend dereference nil.
func TestRenamedVersionMacroRendersEveryRelease(t *testing.T) {
	src := strings.Replace(string(schema.DefaultBytes()), "  - name: DLPACK_MINOR_VERSION\n", "  - name: DLPACK_MINOR\n", 1)
	s, err := schema.Load("renamed.yaml", []byte(src))
	require.NoError(t, err)
	for _, r := range s.Releases {
		files, err := Files(Options{Schema: s, Version: r.Version})
		require.NoError(t, err)
		assert.NotEmpty(t, files)
	}
}

func TestOwnedDirectoriesAreTheDeepestHoldingALanguagesFiles(t *testing.T) {
	files := []backend.File{
		{Path: "c/dlpack/dlpack.h"},
		{Path: "go/dlpack/dlpack.go"}, {Path: "go/dlpack/layout.go"},
		{Path: "python/dlpack_ctypes.py"}, {Path: "python/dlpack/dlpack.h"},
		{Path: "top-level.txt"},
	}
	assert.Equal(t, []string{"c/dlpack", "go/dlpack", "python"}, owned(files))
}

func TestLeftOversAreOnlyFilesThatStartWithTheMarker(t *testing.T) {
	dir := t.TempDir()
	files, err := Files(Options{Schema: defaultSchema(t), Langs: []string{"go"}})
	require.NoError(t, err)
	_, err = Write(dir, files)
	require.NoError(t, err)
	pkg := filepath.Join(dir, "go", "dlpack")
	stale := filepath.Join(pkg, "stale.go")
	require.NoError(t, os.WriteFile(stale, []byte("// "+backend.Marker+"\n\npackage dlpack\n"), 0o644))
	older := filepath.Join(pkg, "older.go") // as another release of dlgen marks its files
	require.NoError(t, os.WriteFile(older, []byte("// Code generated by dlgen v0.0.1. DO NOT EDIT.\n\npackage dlpack\n"), 0o644))
	notes := filepath.Join(pkg, "NOTES.md")
	require.NoError(t, os.WriteFile(notes, []byte("Vendored.\nFiles here start with `// "+backend.Marker+"`.\n"), 0o644))

	report, err := Check(dir, files)
	require.NoError(t, err)
	var only []string
	for _, l := range strings.Split(report, "\n") {
		if strings.HasPrefix(l, "Only in ") {
			only = append(only, l)
		}
	}
	assert.Equal(t, []string{"Only in " + filepath.ToSlash(pkg) + ": older.go", "Only in " + filepath.ToSlash(pkg) + ": stale.go"}, only)
	assert.NotContains(t, report, "NOTES.md")
	_, err = Write(dir, files)
	require.NoError(t, err)
	assert.NoFileExists(t, stale)
	assert.NoFileExists(t, older)
	assert.FileExists(t, notes, "a file that only mentions the marker is the user's")
}

// A breaking -diff is not drift: each finding has its own type (both exit 1).
func TestBreakingDiffHasItsOwnError(t *testing.T) {
	err := Run(Request{DiffFrom: "0.8", Version: "1.0"}, io.Discard)
	var breaking *BreakingChangeError
	require.ErrorAs(t, err, &breaking)
	assert.Equal(t, BreakingChangeError{From: ir.Version{Major: 0, Minor: 8}, To: ir.Version{Major: 1}, Count: 2}, *breaking)
	var drift *DriftError
	assert.False(t, errors.As(err, &drift), "a breaking diff is not a stale output directory")

	err = Run(Request{Check: true, Out: t.TempDir(), Lang: "c"}, io.Discard)
	require.ErrorAs(t, err, &drift)
	assert.False(t, errors.As(err, &breaking))
}

// refusing is a backend that fails with err.
type refusing struct{ err error }

func (refusing) Name() string                               { return "fake" }
func (r refusing) Generate(*ir.API) ([]backend.File, error) { return nil, r.err }

// TestTheDriverNamesNoBackend: the driver reaches backends only through
// the registry (what one supplies another, too), so that a new language is
// its own folder and a line in internal/backend/all.
func TestTheDriverNamesNoBackend(t *testing.T) {
	sources, err := filepath.Glob("*.go")
	require.NoError(t, err)
	for _, name := range sources {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			assert.False(t, strings.HasPrefix(p, "github.com/dlgen/dlgen/internal/backend/"), "%s imports %s", name, p)
		}
	}
}

// TestBackendErrorsNameTheBackendOnce: the driver names the backend in
// its error, backends never do ("c backend: c backend: ..." once), and an
// element a backend refuses is a positioned schema error.
func TestBackendErrorsNameTheBackendOnce(t *testing.T) {
	api := defaultSchema(t).At(defaultSchema(t).Newest())
	_, err := render(refusing{errors.New("no template")}, api)
	assert.EqualError(t, err, "fake backend: no template")

	pos := ir.Pos{File: "s.yaml", Line: 4, Col: 9}
	_, err = render(refusing{backend.Errorf(pos, "kDLX = -1: refused")}, api)
	var positioned schema.ErrorList
	require.ErrorAs(t, err, &positioned)
	assert.EqualError(t, err, "s.yaml:4:9: fake backend: kDLX = -1: refused")

	// The real backends leave their names to the driver.
	err = filepath.WalkDir(filepath.Join("..", "backend"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		src, err := os.ReadFile(path)
		for _, lang := range Languages() {
			assert.NotContains(t, string(src), `"`+lang+` backend`, "%s names a backend in an error", path)
		}
		return err
	})
	require.NoError(t, err)

	// A value the Go backend cannot hold, through Files.
	src := strings.Replace(string(schema.DefaultBytes()), "  - enum: DLDeviceType\n    since: \"0.6\"\n    storage: int32_t\n",
		"  - enum: DLDeviceType\n    since: \"0.6\"\n    storage: int8_t\n", 1)
	s, err := schema.Load("narrow.yaml", []byte(src))
	require.NoError(t, err)
	_, err = Files(Options{Schema: s, Langs: []string{"go"}})
	require.ErrorAs(t, err, &positioned)
	assert.Regexp(t, `^narrow\.yaml:\d+:\d+: go backend: DLDevice\.device_type: enum DLDeviceType is stored as int8_t`, err.Error())
	assert.Equal(t, 1, strings.Count(err.Error(), "backend:"), err.Error())
}

// TestPythonPackageClaimsNoTopLevelName: vendored as a package, every
// release's modules find their own declarations relatively, never by a
// top-level name another vendored copy could answer to.
func TestPythonPackageClaimsNoTopLevelName(t *testing.T) {
	s := defaultSchema(t)
	absolute := regexp.MustCompile(`(?m)^(cimport dlpack|from dlpack(_cython)? cimport)`)
	for _, r := range s.Releases {
		files, err := Files(Options{Schema: s, Version: r.Version, Langs: []string{"python"}, BackendOptions: map[string]string{"python-package": "mylib._vendor.python"}})
		require.NoError(t, err)
		paths := map[string]bool{}
		for _, f := range files {
			paths[f.Path] = true
			assert.False(t, absolute.Match(f.Content), "%s %s cimports by a top-level name", r.Version, f.Path)
		}
		assert.True(t, paths["python/__init__.py"], "%s: no __init__.py", r.Version)
		assert.True(t, paths["__init__.py"], "%s: no __init__.py for the package around python/", r.Version)
	}
}

// TestBackendOptionsAreCheckedByTheirBackend: the driver knows no flag of
// a backend's own; the backend's Check words the value's mistakes, the
// driver those of a flag without its backend.
func TestBackendOptionsAreCheckedByTheirBackend(t *testing.T) {
	pkg := func(v string) map[string]string { return map[string]string{"python-package": v} }
	for _, c := range []struct {
		req  Request
		want string
	}{
		{Request{Lang: "c", BackendOptions: pkg("mylib._vendor.python")}, "-python-package applies to -lang python only"},
		{Request{BackendOptions: pkg("mylib._vendor")}, `-python-package "mylib._vendor" must end in .python`},
		{Request{BackendOptions: pkg("my-lib.python")}, `-python-package "my-lib.python" is not a dotted Python name`},
		{Request{DiffFrom: "1.2", BackendOptions: pkg("mylib._vendor.python")}, "-python-package does not apply to -diff, which writes nothing"},
		{Request{Identify: "x.h", BackendOptions: pkg("mylib._vendor.python")}, "-identify combines with -schema and -schema-yaml only"},
		{Request{DiffRules: true, BackendOptions: pkg("mylib._vendor.python")}, "-diff-rules lists the rules of -diff"},
		{Request{BackendOptions: map[string]string{"cobol-copybook": "X"}}, "no backend takes -cobol-copybook"},
	} {
		err := Run(c.req, io.Discard)
		var usage *UsageError
		require.ErrorAs(t, err, &usage, "%+v", c.req)
		assert.ErrorContains(t, err, c.want)
	}
	// Given with its backend among others, it reaches that backend alone.
	files, err := Files(Options{Schema: defaultSchema(t), Langs: []string{"c", "python"}, BackendOptions: pkg("mylib._vendor.python")})
	require.NoError(t, err)
	paths := map[string]bool{}
	for _, f := range files {
		paths[f.Path] = true
	}
	assert.True(t, paths["python/__init__.py"])
	assert.True(t, paths["c/dlpack/dlpack.h"])
}

// The -check diff is a patch: `git apply -p0`, run where dlgen ran, creates
// the missing file, updates the changed one and deletes the left-over, and
// the directory is then current.
func TestCheckDiffIsAPatchGitApplies(t *testing.T) {
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	work := t.TempDir()
	files, err := Files(Options{Schema: defaultSchema(t), Langs: []string{"c"}})
	require.NoError(t, err)
	_, err = Write(filepath.Join(work, "out"), files)
	require.NoError(t, err)
	header := filepath.Join(work, "out", filepath.FromSlash(files[0].Path))
	require.NoError(t, os.WriteFile(header, bytes.Replace(files[0].Content, []byte("kDLCPU = 1"), []byte("kDLCPU = 7"), 1), 0o644))
	require.NoError(t, os.Remove(filepath.Join(work, "out", filepath.FromSlash(files[1].Path))))
	leftOver := filepath.Join(work, "out", "c", "dlpack", "older.h")
	require.NoError(t, os.WriteFile(leftOver, []byte("/* "+backend.Marker+"\n */\nint older;"), 0o644))

	t.Chdir(work) // -out out, relative, as a CI step runs it
	patch, err := Check("out", files)
	require.NoError(t, err)
	assert.Contains(t, patch, "--- /dev/null\n+++ out/c/dlpack/dlpack_helpers.h\t(generated)\n@@ -0,0 +1,")
	assert.Contains(t, patch, "Only in out/c/dlpack: older.h\n--- out/c/dlpack/older.h\n+++ /dev/null\n@@ -1,3 +0,0 @@\n")
	assert.Contains(t, patch, "-int older;\n\\ No newline at end of file\n")
	require.NoError(t, os.WriteFile("check.patch", []byte(patch), 0o644))
	cmd := exec.Command(gitPath, "apply", "-p0", "check.patch")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git apply: %s\n%s", out, patch)
	after, err := Check("out", files)
	require.NoError(t, err)
	assert.Empty(t, after)
}
