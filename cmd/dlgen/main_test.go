package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dlgen/dlgen"
	"github.com/dlgen/dlgen/internal/abidiff"
	"github.com/dlgen/dlgen/internal/backend"
	"github.com/dlgen/dlgen/internal/generate"
	"github.com/dlgen/dlgen/internal/schema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func runDlgen(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestGenerateThenCheck(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := runDlgen(t, "-out", dir)
	require.Equal(t, 0, code, stderr)
	assert.FileExists(t, filepath.Join(dir, "c", "dlpack", "dlpack.h"))
	assert.FileExists(t, filepath.Join(dir, "go", "dlpack", "dlpack.go"))

	code, stdout, _ := runDlgen(t, "-out", dir, "-check")
	assert.Equal(t, 0, code)
	assert.Empty(t, stdout)

	// Another release is drift for a tree generated at the newest.
	code, stdout, stderr = runDlgen(t, "-out", dir, "-check", "-dlpack-version", "1.2")
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "-#define DLPACK_MINOR_VERSION 3\n+#define DLPACK_MINOR_VERSION 2")
	assert.Contains(t, stderr, "is stale")
}

func TestVersionPrintsTheRelease(t *testing.T) {
	code, stdout, stderr := runDlgen(t, "-version")
	assert.Equal(t, 0, code)
	assert.Equal(t, "dlgen v"+dlgen.Version+"\n", stdout)
	assert.Empty(t, stderr)
	code, stdout, _ = runDlgen(t, "-lang", "cobol", "-version", "-out", t.TempDir())
	assert.Equal(t, 0, code, "-version answers whatever the other flags")
	assert.Equal(t, "dlgen v"+dlgen.Version+"\n", stdout)
}

func TestCheckFindsMissingFiles(t *testing.T) {
	code, stdout, _ := runDlgen(t, "-out", t.TempDir(), "-check", "-lang", "c")
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "--- /dev/null")
}

func TestRewritesNothingWhenCurrent(t *testing.T) {
	dir := t.TempDir()
	code, _, _ := runDlgen(t, "-out", dir, "-lang", "c")
	require.Equal(t, 0, code)
	path := filepath.Join(dir, "c", "dlpack", "dlpack.h")
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	require.NoError(t, os.Chtimes(path, old, old))
	code, _, _ = runDlgen(t, "-out", dir, "-lang", "c")
	require.Equal(t, 0, code)
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, old, info.ModTime(), "an unchanged file must not be rewritten")
}

// knownReleases is the embedded schema's releases, as an error lists them.
func knownReleases(t *testing.T) string {
	s, err := schema.Default()
	require.NoError(t, err)
	var known []string
	for _, r := range s.Releases {
		known = append(known, r.Version.String())
	}
	return strings.Join(known, ", ")
}

func TestUnknownVersion(t *testing.T) {
	code, _, stderr := runDlgen(t, "-out", t.TempDir(), "-dlpack-version", "2.0")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "unknown DLPack version 2.0 (known: "+knownReleases(t)+")")
	code, _, stderr = runDlgen(t, "-dlpack-version", "one")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "known: 0.6")
}

func TestLanguageListOfOnlyCommasIsAnError(t *testing.T) {
	// it meant "every language" before, silently
	for _, lang := range []string{",", " , ,"} {
		dir := t.TempDir()
		code, _, stderr := runDlgen(t, "-out", dir, "-lang", lang)
		assert.Equal(t, 2, code, lang)
		assert.Contains(t, stderr, "has an empty name in its list")
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Empty(t, entries, "nothing written")
	}
}

func TestUnknownLanguage(t *testing.T) {
	code, _, stderr := runDlgen(t, "-out", t.TempDir(), "-lang", "c,fortran")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `unknown language "fortran"`)
}

func TestBrokenSchemaGivesPositionsAndExit2(t *testing.T) {
	path := filepath.Join(t.TempDir(), "broken.yaml")
	src := "name: dlpack\nheader_guard: G\nversions:\n  - version: \"1.0\"\ndeclarations:\n  - struct: S\n    since: \"1.0\"\n    fields:\n      - {name: a, type: Missing, since: \"1.0\"}\n      - {name: b, type: int32_t, since: \"1.0\", size: 4}\npython:\n  - {name: dltensor, role: capsule, since: \"1.0\"}\n  - {name: used_dltensor, role: used_capsule, since: \"1.0\"}\n"
	require.NoError(t, os.WriteFile(path, []byte(src), 0o644))
	code, stdout, stderr := runDlgen(t, "-schema", path, "-out", t.TempDir())
	assert.Equal(t, 2, code)
	assert.Empty(t, stdout)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	require.Len(t, lines, 2, stderr)
	assert.Equal(t, path+`:9:25: S.a uses undefined type Missing`, lines[0])
	assert.True(t, strings.HasPrefix(lines[1], path+`:10:48: unknown key "size" in a field`), lines[1])
}

func TestMissingSchemaFile(t *testing.T) {
	code, _, stderr := runDlgen(t, "-schema", filepath.Join(t.TempDir(), "nope.yaml"))
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "no such file")
}

// TestUsageErrors: a mistake on the command line is one line that names
// it and its fix, then where the manual is; never the whole usage.
func TestUsageErrors(t *testing.T) {
	known := strings.Join(generate.Languages(), ", ")
	for _, c := range []struct {
		args []string
		line string
	}{
		{[]string{"-lnag", "c", "-out", "x"}, "flag provided but not defined: -lnag; did you mean -lang?"},
		{[]string{"-out", "x", "-chekc"}, "flag provided but not defined: -chekc; did you mean -check?"},
		{[]string{"--dlpack-verison", "1.3"}, "flag provided but not defined: -dlpack-verison; did you mean -dlpack-version?"},
		{[]string{"-bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"-x"}, "flag provided but not defined: -x"},
		{[]string{"-out"}, "flag needs an argument: -out"},
		{[]string{"-out", "x", "stray"}, `unexpected argument "stray": dlgen takes flags only, each value after its flag (-out DIR)`},
		{[]string{"-dlpack-version", "-out", "x"}, `-dlpack-version took "-out" as its value; give -dlpack-version its value first (-dlpack-version VALUE -out ...)`},
		{[]string{"-out", "--check=true"}, `-out took "--check=true" as its value; give -out its value first (-out VALUE --check=true ...)`},
		{[]string{"-lang=", "-out", "x"}, `-lang "" has an empty name in its list; name languages separated by commas (known: ` + known + `), or leave -lang out for all of them`},
		{[]string{"-lang", "c,,go", "-out", "x"}, `-lang "c,,go" has an empty name in its list; name languages separated by commas (known: ` + known + `), or leave -lang out for all of them`},
		{[]string{"-schema", "absent.yaml", "-out", "x"}, "-schema absent.yaml: no such file or directory (give -schema a YAML schema file, or leave it out for the embedded one)"},
		{[]string{"-schema", ".", "-out", "x"}, "-schema .: is a directory (give -schema a YAML schema file, or leave it out for the embedded one)"},
		{[]string{"-identify", "absent.h"}, "-identify absent.h: no such file or directory (give -identify a DLPack header file)"},
	} {
		code, stdout, stderr := runDlgen(t, c.args...)
		assert.Equal(t, 2, code, "%v", c.args)
		assert.Empty(t, stdout, "%v", c.args)
		assert.Equal(t, "dlgen: "+c.line+"\nrun dlgen -h for usage\n", stderr, "%v", c.args)
	}
}

// TestOutThatIsAFileIsNamed: -out naming a file (or a path through one)
// is one line that names -out, exit 2, and the file is left as it was.
func TestOutThatIsAFileIsNamed(t *testing.T) {
	file := filepath.Join(t.TempDir(), "notes.txt")
	require.NoError(t, os.WriteFile(file, []byte("mine\n"), 0o644))
	for _, args := range [][]string{{"-out", file}, {"-out", file, "-check"}} {
		code, stdout, stderr := runDlgen(t, args...)
		assert.Equal(t, 2, code, "%v", args)
		assert.Empty(t, stdout, "%v", args)
		assert.Equal(t, "dlgen: -out "+file+" is a file, not a directory: name the directory to write into (dlgen makes it if missing)\n", stderr, "%v", args)
	}
	code, _, stderr := runDlgen(t, "-out", filepath.Join(file, "gen"))
	assert.Equal(t, 2, code)
	assert.Regexp(t, "^dlgen: -out "+regexp.QuoteMeta(filepath.Join(file, "gen"))+": .*not a directory\n$", stderr)
	content, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, "mine\n", string(content))
}

// TestCheckOfMissingOutSaysSo: -check of an -out that does not exist (a
// typo, or a tree never generated) says so in one line, not in a diff
// that creates every file, and still exits 1.
func TestCheckOfMissingOutSaysSo(t *testing.T) {
	t.Chdir(t.TempDir())
	code, stdout, stderr := runDlgen(t, "-lang", "c", "-out", "gen", "-check")
	assert.Equal(t, 1, code)
	assert.Empty(t, stdout)
	assert.Equal(t, "dlgen: -out gen does not exist: nothing to check; run dlgen without -check first\n", stderr)
}

// TestCheckNamesGoGenerateWhereALineWritesOut: where a //go:generate line
// of the module writes -out, the fix -check names is go generate, with the
// line; for another -out it stays dlgen without -check.
func TestCheckNamesGoGenerateWhereALineWritesOut(t *testing.T) {
	module := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(module, "go.mod"), []byte("module example.com/m\n\ngo 1.24\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(module, "pkg"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(module, "pkg", "gen.go"), []byte(
		"// Package pkg holds the header.\npackage pkg\n\n//go:generate go tool dlgen -lang c -dlpack-version 1.3 -out internal\n"), 0o644))
	t.Chdir(module)
	where := filepath.Join("pkg", "gen.go") + ":4"

	code, _, stderr := runDlgen(t, "-lang", "c", "-dlpack-version", "1.3", "-out", filepath.Join("pkg", "internal"), "-check")
	assert.Equal(t, 1, code)
	assert.Equal(t, "dlgen: -out "+filepath.Join("pkg", "internal")+" does not exist: nothing to check; run go generate ./... first ("+where+" writes it)\n", stderr)

	require.NoError(t, os.MkdirAll(filepath.Join(module, "pkg", "internal"), 0o755))
	t.Chdir(filepath.Join(module, "pkg")) // the line is found from anywhere in the module
	code, _, stderr = runDlgen(t, "-lang", "c", "-dlpack-version", "1.3", "-out", "internal", "-check")
	assert.Equal(t, 1, code)
	assert.Equal(t, "dlgen: internal is stale; run go generate ./... to update it (gen.go:4 writes it)\n", stderr)

	require.NoError(t, os.MkdirAll(filepath.Join(module, "pkg", "other"), 0o755))
	_, _, stderr = runDlgen(t, "-lang", "c", "-out", "other", "-check")
	assert.Equal(t, "dlgen: other is stale; run dlgen without -check to update it\n", stderr)
}

func TestDiffBetweenReleases(t *testing.T) {
	code, stdout, _ := runDlgen(t, "-diff", "1.2", "-dlpack-version", "1.3")
	assert.Equal(t, 0, code, "1.2 to 1.3 breaks nothing")
	assert.Equal(t, "INFO MACRO_VALUE: DLPACK_MINOR_VERSION is 3, was 2\n", stdout)

	code, stdout, _ = runDlgen(t, "-diff", "0.8")
	assert.Equal(t, 1, code, "macros removed in 1.0 break source code")
	assert.Contains(t, stdout, "API MACRO_NO_DELETE: macro DLPACK_VERSION is no longer defined")
	assert.Contains(t, stdout, "INFO ADDITION: new DLManagedTensorVersioned")
	assert.NotContains(t, stdout, "\nABI ")

	code, _, stderr := runDlgen(t, "-diff", "0.5")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "unknown DLPack version 0.5")
}

// A release is spelled as upstream tags it: 1.03 was once taken as 1.3.
func TestReleaseNumbersAreStrict(t *testing.T) {
	for _, flag := range []string{"-dlpack-version", "-diff"} {
		for _, bad := range []string{"1.03", "01.3", "+1.3", "1.3.0", "v1.3"} {
			code, stdout, stderr := runDlgen(t, "-out", t.TempDir(), flag, bad)
			if flag == "-diff" {
				code, stdout, stderr = runDlgen(t, flag, bad)
			}
			assert.Equal(t, 2, code, "%s %s", flag, bad)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, flag+`: version "`+bad+`" is not of the form MAJOR.MINOR`, "%s %s", flag, bad)
			assert.Contains(t, stderr, "(known: "+knownReleases(t)+")", "%s %s", flag, bad)
		}
	}
}

// Upstream's main branch is a release of its own, never the default.
func TestMainBranch(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := runDlgen(t, "-out", dir, "-dlpack-version", "main")
	require.Equal(t, 0, code, stderr)
	for path, wants := range map[string][]string{
		"c/dlpack/dlpack.h":       {"kDLTPU = 19,", "kDLTPUHost = 20,", "kDLAscend = 21", "kDLBcomplex = 18U", "#define DLPACK_MINOR_VERSION 3", "DLPack main (unreleased, after v1.3)"},
		"go/dlpack/dlpack.go":     {"DeviceTypeTPU DeviceType = 19", "DeviceTypeTPUHost DeviceType = 20", "DeviceTypeAscend DeviceType = 21", "DataTypeCodeBcomplex DataTypeCode = 18", "MinorVersion = 3"},
		"python/dlpack_ctypes.py": {"kDLTPU = 19", "kDLTPUHost = 20", "kDLAscend = 21", "kDLBcomplex = 18", `DLPACK_VERSION_STRING = "main"`},
	} {
		text, err := os.ReadFile(filepath.Join(dir, path))
		require.NoError(t, err)
		for _, want := range wants {
			assert.Contains(t, string(text), want, path)
		}
	}
	// The default stays the newest release, and -check tells them apart.
	code, stdout, _ := runDlgen(t, "-out", dir, "-check", "-lang", "c")
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "-  kDLAscend = 21\n")

	code, stdout, stderr = runDlgen(t, "-diff", "1.3", "-dlpack-version", "main")
	assert.Equal(t, 0, code, stderr)
	for _, name := range []string{"kDLTPU", "kDLTPUHost", "kDLAscend", "kDLBcomplex"} {
		assert.Contains(t, stdout, "INFO ADDITION: new "+name, stdout)
	}
	assert.Len(t, strings.Split(strings.TrimSpace(stdout), "\n"), 4, "main adds these four and nothing else")
}

// -identify names the release of a header and lists how it differs: exit
// 0 when it is the release exactly, 1 when it differs, 2 when it is no
// DLPack header.
func TestIdentify(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := runDlgen(t, "-out", dir, "-lang", "c", "-dlpack-version", "1.1")
	require.Equal(t, 0, code, stderr)
	path := filepath.Join(dir, "c", "dlpack", "dlpack.h")
	code, stdout, stderr := runDlgen(t, "-identify", path)
	assert.Equal(t, 0, code, stderr)
	assert.Equal(t, path+": DLPack v1.1, as dlgen declares it\n", stdout)

	text, err := os.ReadFile(path)
	require.NoError(t, err)
	patched := filepath.Join(dir, "patched.h")
	require.NoError(t, os.WriteFile(patched, bytes.Replace(text, []byte("int64_t* strides;"), []byte("const int64_t* strides;"), 1), 0o644))
	code, stdout, stderr = runDlgen(t, "-identify", patched)
	assert.Equal(t, 1, code)
	assert.Equal(t, patched+": DLPack v1.1, with 1 difference from dlgen's declarations of v1.1:\n"+
		"  field DLTensor.strides: type const int64_t*; v1.1 has int64_t*\n", stdout)
	assert.Contains(t, stderr, "differs from DLPack 1.1")

	notC := filepath.Join(dir, "notes.h")
	require.NoError(t, os.WriteFile(notC, []byte("DLPack is nice.\n"), 0o644))
	noDLPack := filepath.Join(dir, "other.h")
	require.NoError(t, os.WriteFile(noDLPack, []byte("typedef int other_t;\n"), 0o644))
	for file, want := range map[string]string{
		filepath.Join(dir, "missing.h"): "no such file",
		notC:                            "not a C header dlgen can read",
		noDLPack:                        "no DLPack declarations",
	} {
		code, stdout, stderr = runDlgen(t, "-identify", file)
		assert.Equal(t, 2, code, file)
		assert.Empty(t, stdout)
		assert.Contains(t, stderr, want)
	}

	// What a header adds to the schema's newest release, as schema YAML.
	code, _, stderr = runDlgen(t, "-identify", patched, "-schema-yaml")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "patched.h is DLPack 1.1, older than the schema's newest release main")
	code, _, stderr = runDlgen(t, "-out", dir, "-lang", "c", "-dlpack-version", "main")
	require.Equal(t, 0, code, stderr)
	text, err = os.ReadFile(path)
	require.NoError(t, err)
	ahead := filepath.Join(dir, "ahead.h")
	require.NoError(t, os.WriteFile(ahead, bytes.Replace(text, []byte("kDLAscend = 21\n"), []byte("kDLAscend = 21,\n  kDLNext = 22\n"), 1), 0o644))
	code, stdout, stderr = runDlgen(t, "-identify", ahead, "-schema-yaml")
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "# What "+ahead+" declares beyond the schema's newest release, main, as DLPack main.")
	assert.Contains(t, stdout, "declarations:\n  - enum: DLDeviceType\n    values:\n      - {name: kDLNext, value: 22, since: main}\n")

	for _, args := range [][]string{{"-identify", path, "-lang", "c"}, {"-identify", path, "-dlpack-version", "1.1"}, {"-identify", path, "-check"}, {"-schema-yaml"}} {
		code, _, stderr = runDlgen(t, args...)
		assert.Equal(t, 2, code, "%v", args)
		assert.Contains(t, stderr, "-identify", "%v", args)
	}
}

// Generating v1.3 and then checking v0.6 Python once passed although the
// Cython files of v1.3 were still there.
func TestCheckReportsLeftOverFiles(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := runDlgen(t, "-out", dir, "-lang", "python")
	require.Equal(t, 0, code, stderr)
	built := filepath.Join(dir, "python", "dlpack_cython.c") // what cythonize leaves: not dlgen's
	require.NoError(t, os.WriteFile(built, []byte("/* Generated by Cython */\n"), 0o644))

	code, stdout, stderr := runDlgen(t, "-out", dir, "-lang", "python", "-dlpack-version", "0.6", "-check")
	assert.Equal(t, 1, code, stderr)
	pyDir := filepath.ToSlash(filepath.Join(dir, "python"))
	assert.Contains(t, stdout, "Only in "+pyDir+": dlpack_cython.pyx\n")
	assert.Contains(t, stdout, "Only in "+pyDir+"/dlpack: dlpack.h\n")
	assert.NotContains(t, stdout, "dlpack_cython.c")

	code, _, stderr = runDlgen(t, "-out", dir, "-lang", "python", "-dlpack-version", "0.6")
	require.Equal(t, 0, code, stderr)
	assert.NoFileExists(t, filepath.Join(dir, "python", "dlpack_cython.pyx"), "generation removes dlgen's left-overs")
	assert.FileExists(t, built, "files dlgen did not write are kept")
	code, stdout, _ = runDlgen(t, "-out", dir, "-lang", "python", "-dlpack-version", "0.6", "-check")
	assert.Equal(t, 0, code, stdout)
}

func TestPythonPackageIsVendoredInPlace(t *testing.T) {
	dir := t.TempDir()
	args := []string{"-lang", "python", "-out", dir, "-python-package", "mylib._vendor.python"}
	code, _, stderr := runDlgen(t, args...)
	require.Equal(t, 0, code, stderr)
	init, err := os.ReadFile(filepath.Join(dir, "python", "__init__.py"))
	require.NoError(t, err)
	assert.Contains(t, string(init), "mylib._vendor.python")
	code, stdout, _ := runDlgen(t, append(args, "-check")...)
	assert.Equal(t, 0, code, stdout)
	// The same directory as top-level modules: the package's files differ.
	code, stdout, _ = runDlgen(t, "-lang", "python", "-out", dir, "-check")
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "Only in "+filepath.ToSlash(filepath.Join(dir, "python"))+": __init__.py")
	assert.Contains(t, stdout, "\n-from . cimport dlpack\n")
	assert.Contains(t, stdout, "\n+cimport dlpack\n")
}

func TestFlagsThatDoNotCombineAreUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-check", "-diff", "1.2"},
		{"-diff", "1.2", "-lang", "cobol"},
		{"-diff", "1.2", "-lang", "c"},
		{"-diff", "1.2", "-out", "somewhere"},
		{"-diff", "1.2", "-python-package", "mylib._vendor.python"},
		{"-lang", "c", "-python-package", "mylib._vendor.python"},
		{"-python-package", "mylib._vendor"},
		{"-python-package", "mylib..python"},
		{"-python-package", "my-lib.python"},
		{"-python-package", "class.python"},
		{"-check", "-lang", "cobol"},
		{"-lang", "c,cobol", "-dlpack-version", "9.9"},
		{"-diff", "9.9"},
		{"-diff", "one"},
	} {
		code, stdout, stderr := runDlgen(t, args...)
		assert.Equal(t, 2, code, "%v: %s", args, stderr)
		assert.Empty(t, stdout, "%v", args)
		assert.NotEmpty(t, stderr, "%v", args)
	}
}

// TestEveryFlagCombination runs dlgen over every combination of -lang,
// -dlpack-version and mode, on the default schema and on one with a typo
// in a retyped field's old type (which once loaded and then panicked):
// each run exits with the status the manual gives it, a broken schema is
// always exit 2 with a positioned error or a usage error, and nothing
// panics.
func TestEveryFlagCombination(t *testing.T) {
	broken := filepath.Join(t.TempDir(), "broken.yaml")
	src := strings.Replace(string(schema.DefaultBytes()), "retyped: {in: \"0.7\", from: int}", "retyped: {in: \"0.7\", from: ynt}", 1)
	require.NoError(t, os.WriteFile(broken, []byte(src), 0o644))
	empty := t.TempDir()
	for _, schemaArgs := range [][]string{nil, {"-schema", broken}} {
		for _, lang := range []string{"", "c", "go", "python", "c,go,python", "cobol"} {
			for _, version := range []string{"", "0.6", "1.3", "9.9", "x"} {
				for _, mode := range [][]string{{"-check"}, {"-diff", "0.6"}, {"-diff", "1.3"}, {"-diff", "9.9"}, {"-check", "-diff", "1.0"}} {
					args := append(append([]string{}, schemaArgs...), mode...)
					if lang != "" {
						args = append(args, "-lang", lang)
					}
					if version != "" {
						args = append(args, "-dlpack-version", version)
					}
					if mode[0] == "-check" {
						args = append(args, "-out", empty)
					}
					code, _, stderr := runDlgen(t, args...)
					require.Equal(t, wantExit(schemaArgs != nil, lang, version, mode), code, "%v: %s", args, stderr)
					usage := strings.Contains(stderr, "run dlgen -h for usage")
					if schemaArgs != nil {
						assert.True(t, usage || strings.Contains(stderr, broken+":"), "%v: %s", args, stderr)
					}
					if code == 2 && !usage && schemaArgs == nil {
						t.Errorf("%v: exit 2 without a usage error: %s", args, stderr)
					}
				}
			}
		}
	}
}

// wantExit is the exit status the manual gives one run of
// TestEveryFlagCombination: 2 for a broken schema or a usage error, else
// 1 when -check finds the empty -out stale or -diff a break, else 0.
func wantExit(brokenSchema bool, lang, version string, mode []string) int {
	known := func(v string) bool { return v == "" || v == "0.6" || v == "1.3" }
	switch {
	case brokenSchema, lang == "cobol", !known(version):
		return 2
	case mode[0] == "-check" && len(mode) > 1: // -check with -diff
		return 2
	case mode[0] == "-check":
		return 1 // nothing under the empty -out
	case lang != "", !known(mode[1]): // -diff with -lang, or an unknown -diff release
		return 2
	}
	from, to := mode[1], version
	if to == "" {
		to = "1.3"
	}
	if from == to {
		return 0
	}
	return 1 // 0.6 and 1.3 differ by macros removed in 1.0, whichever way
}

// TestHelpIsTheManual: -h, -help and --help print the package doc, the
// manual, exactly as go doc prints it inside this module, to stdout.
func TestHelpIsTheManual(t *testing.T) {
	out, err := exec.Command("go", "doc", ".").Output() // the go that runs this test
	require.NoError(t, err)
	manual := string(out)
	require.Contains(t, manual, "\nUsage:\n")
	for _, flag := range []string{"-h", "-help", "--help"} {
		code, stdout, stderr := runDlgen(t, flag)
		assert.Equal(t, 0, code, flag)
		assert.Equal(t, manual, stdout, flag)
		assert.Empty(t, stderr, flag)
	}
}

// TestBackendRefusalIsPositioned: a value the schema allows but a backend
// cannot render is reported at its place in the schema, exit 2, named once
// by the backend that refuses it.
func TestBackendRefusalIsPositioned(t *testing.T) {
	src := string(schema.DefaultBytes())
	entry := "{name: kDLVulkan, value: 7,"
	require.Contains(t, src, entry)
	line := strings.Count(src[:strings.Index(src, entry)], "\n") + 1
	path := filepath.Join(t.TempDir(), "negative.yaml")
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(src, entry, "{name: kDLVulkan, value: -7,", 1)), 0o644))

	code, stdout, stderr := runDlgen(t, "-schema", path, "-out", t.TempDir())
	assert.Equal(t, 2, code)
	assert.Empty(t, stdout)
	assert.Regexp(t, "^"+regexp.QuoteMeta(path)+fmt.Sprintf(":%d:\\d+: ", line)+
		regexp.QuoteMeta("python backend: DLDeviceType.kDLVulkan = -7: the Python modules keep enum values in a 64-bit mask")+"\n$", stderr)

	code, _, stderr = runDlgen(t, "-schema", path, "-out", t.TempDir(), "-lang", "c,go")
	assert.Equal(t, 0, code, "C and Go take negative enumerators: %s", stderr)
}

func TestDiffRulesListsEveryRuleWithItsPurpose(t *testing.T) {
	code, stdout, stderr := runDlgen(t, "-diff-rules")
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	require.Len(t, lines, 1+len(abidiff.Rules), stdout)
	assert.Regexp(t, `^ID +CATEGORY +PURPOSE$`, lines[0])
	for i, r := range abidiff.Rules {
		assert.Regexp(t, "^"+r.ID+" +"+string(r.Category)+" +"+regexp.QuoteMeta(r.Purpose)+"$", lines[i+1])
	}
	for _, args := range [][]string{{"-diff-rules", "-check"}, {"-diff-rules", "-diff", "1.2"}, {"-diff-rules", "-lang", "c"}, {"-diff-rules", "-out", "x"}} {
		code, _, stderr := runDlgen(t, args...)
		assert.Equal(t, 2, code, "%v", args)
		assert.Contains(t, stderr, "-diff-rules", "%v", args)
	}
}

// TestGenerateWithoutOutIsAUsageError: bare dlgen would write four
// directories into wherever it happens to run; it writes nothing and says
// which flag to pass instead.
func TestGenerateWithoutOutIsAUsageError(t *testing.T) {
	t.Chdir(t.TempDir())
	var folders []string // what -lang's default writes: a folder per language
	for _, r := range backend.Registered() {
		if !r.ByNameOnly {
			folders = append(folders, r.Name+"/")
		}
	}
	everyFolder := strings.Join(folders[:len(folders)-1], ", ") + " and " + folders[len(folders)-1]
	for _, c := range []struct {
		args    []string
		folders string // what the run would write
	}{
		{nil, everyFolder},
		{[]string{"-check"}, everyFolder},
		{[]string{"-lang", "c", "-dlpack-version", "1.3"}, "c/"},
		{[]string{"-lang", "python,conformance"}, "python/ and conformance/"},
	} {
		code, stdout, stderr := runDlgen(t, c.args...)
		assert.Equal(t, 2, code, "%v", c.args)
		assert.Empty(t, stdout, "%v", c.args)
		assert.Equal(t, "dlgen: -out is missing: pass -out DIR, the directory to write "+c.folders+" into (-out . for the current one)\n"+
			"run dlgen -h for usage\n", stderr, "%v", c.args)
	}
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	assert.Empty(t, entries, "dlgen wrote without -out")

	code, _, stderr := runDlgen(t, "-lang", "c", "-out", ".")
	require.Equal(t, 0, code, stderr)
	assert.FileExists(t, filepath.Join("c", "dlpack", "dlpack.h"))
}

// TestCheckUnderPreCommitNamesTheHooksDlgen: inside a pre-commit hook
// there is no dlgen on PATH, so "run dlgen without -check" is no help; the
// hint is the command line that updates the files, with the hook's own
// executable. (tests/dist runs it from a real hook.)
func TestCheckUnderPreCommitNamesTheHooksDlgen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "third party")
	t.Setenv("PRE_COMMIT", "1")
	exe, err := os.Executable()
	require.NoError(t, err)
	update := shellQuote(exe) + " -lang c -out '" + dir + "'\n"
	code, _, stderr := runDlgen(t, "-lang", "c", "-check", "-out", dir)
	assert.Equal(t, 1, code)
	assert.Equal(t, "dlgen: -out "+dir+" does not exist: nothing to check; run the hook's dlgen without -check first:\n  "+update, stderr)

	require.NoError(t, os.Mkdir(dir, 0o755))
	code, _, stderr = runDlgen(t, "-lang", "c", "-check", "-out", dir)
	assert.Equal(t, 1, code)
	assert.Equal(t, "dlgen: "+dir+" is stale; run the hook's dlgen without -check to update it:\n  "+update, stderr)

	t.Setenv("PRE_COMMIT", "")
	_, _, stderr = runDlgen(t, "-lang", "c", "-check", "-out", dir)
	assert.Equal(t, "dlgen: "+dir+" is stale; run dlgen without -check to update it\n", stderr)
}

func TestShellQuote(t *testing.T) {
	assert.Equal(t, "-out", shellQuote("-out"))
	assert.Equal(t, "src/mypkg/_vendor", shellQuote("src/mypkg/_vendor"))
	assert.Equal(t, "''", shellQuote(""))
	assert.Equal(t, `'it'\''s here'`, shellQuote("it's here"))
}

// tree records every file and link under dir, by path: a file's content, a
// link's target, never followed.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		switch {
		case err != nil || d.IsDir():
			return err
		case d.Type()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			out[p] = "-> " + target
			return err
		}
		content, err := os.ReadFile(p)
		out[p] = string(content)
		return err
	}))
	return out
}

// TestLinksLeadingOutOfOutAreRefused: a vendored tree that ships a link
// leading out of -out (to a file, as a language's directory, above the
// directory the left-over sweep walks) makes dlgen exit 2 naming the link,
// with nothing written, read or removed anywhere, -out included.
func TestLinksLeadingOutOfOutAreRefused(t *testing.T) {
	header, err := os.ReadFile(filepath.Join("..", "..", "generated", "c", "dlpack", "dlpack.h"))
	require.NoError(t, err)
	for _, c := range []struct {
		name  string
		files map[string]string // path under the work directory: content, or "-> target" for a link
		lang  string
		link  string // the link the error names, under the work directory
		check bool
	}{
		{"file", map[string]string{"outside/victim.txt": "precious\n", "out/c/dlpack/dlpack.h": "-> ../../../outside/victim.txt"}, "c", "out/c/dlpack/dlpack.h", false},
		{"language directory", map[string]string{"outside/mine.py": "precious\n", "out/python": "-> ../outside"}, "python", "out/python", false},
		{"swept directory", map[string]string{"elsewhere/c/dlpack/old.h": "/* Code generated by dlgen v0.0.1. DO NOT EDIT.\n */\n", "out/c": "-> ../elsewhere/c"}, "c", "out/c", false},
		// -check reads no file through a link either, even one equal to what dlgen writes.
		{"check file", map[string]string{"outside/dlpack.h": string(header), "out/c/dlpack/dlpack.h": "-> ../../../outside/dlpack.h"}, "c", "out/c/dlpack/dlpack.h", true},
		{"check swept directory", map[string]string{"elsewhere/c/dlpack/old.h": "/* Code generated by dlgen v0.0.1. DO NOT EDIT.\n */\n", "out/c": "-> ../elsewhere/c"}, "c", "out/c", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			work := t.TempDir()
			for p, content := range c.files {
				p = filepath.Join(work, filepath.FromSlash(p))
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				if target, ok := strings.CutPrefix(content, "-> "); ok {
					require.NoError(t, os.Symlink(filepath.FromSlash(target), p))
				} else {
					require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
				}
			}
			before := tree(t, work)
			args := []string{"-lang", c.lang, "-out", filepath.Join(work, "out")}
			if c.check {
				args = append(args, "-check")
			}
			code, stdout, stderr := runDlgen(t, args...)
			assert.Equal(t, 2, code, stderr)
			assert.Empty(t, stdout)
			assert.Equal(t, "dlgen: "+filepath.Join(work, filepath.FromSlash(c.link))+" is a symbolic link that leads outside -out "+
				filepath.Join(work, "out")+"; dlgen reads, writes and removes only inside -out\n", stderr)
			assert.Equal(t, before, tree(t, work), "nothing written or removed")
		})
	}
}

// TestLinksInsideOutAreFollowed: a link that stays inside -out is followed,
// for writing and for -check.
func TestLinksInsideOutAreFollowed(t *testing.T) {
	out := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(out, "vendored-c"), 0o755))
	require.NoError(t, os.Symlink("vendored-c", filepath.Join(out, "c")))
	code, _, stderr := runDlgen(t, "-lang", "c", "-out", out)
	require.Equal(t, 0, code, stderr)
	assert.FileExists(t, filepath.Join(out, "vendored-c", "dlpack", "dlpack.h"))
	code, stdout, stderr := runDlgen(t, "-lang", "c", "-out", out, "-check")
	assert.Equal(t, 0, code, stdout+stderr)
}

// TestReservedNameIsPositionedWhateverTheLanguage: a field named typeof
// (a C23 keyword, a Rust reserved word) stops dlgen with exit 2 and a
// positioned error naming both languages, even for -lang go, which could
// take it.
func TestReservedNameIsPositionedWhateverTheLanguage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "typeof.yaml")
	src := strings.Replace(string(schema.DefaultBytes()), "{name: lanes, type: uint16_t,", "{name: typeof, type: uint16_t,", 1)
	require.NoError(t, os.WriteFile(path, []byte(src), 0o644))
	out := t.TempDir()
	code, stdout, stderr := runDlgen(t, "-schema", path, "-lang", "go", "-out", out)
	assert.Equal(t, 2, code)
	assert.Empty(t, stdout)
	assert.Regexp(t, `^`+regexp.QuoteMeta(path)+`:\d+:\d+: field name "typeof" is a C23 keyword in C and a reserved keyword in Rust; a schema name must be free in every language dlgen writes\n$`, stderr)
	assert.NoDirExists(t, filepath.Join(out, "go"))
}

// TestCheckReportsACompiledModuleBuiltFromOtherSources: -check reads the
// fingerprint a compiled dlpack_cython carries (a C string in the file) and
// reports one built from other sources than those beside it, or from
// sources older than fingerprints, with the rebuild; one built from these
// sources passes. (tests/python/test_stale_build.py builds real ones.)
func TestCheckReportsACompiledModuleBuiltFromOtherSources(t *testing.T) {
	fingerprint := regexp.MustCompile(`dlgen fingerprint: DLPack [0-9a-z.]+, sources [0-9a-f]{16}`)
	of := func(dir string) string {
		pyx, err := os.ReadFile(filepath.Join(dir, "python", "dlpack_cython.pyx"))
		require.NoError(t, err)
		return string(fingerprint.Find(pyx))
	}
	old, dir := t.TempDir(), t.TempDir()
	for _, g := range []struct{ dir, release string }{{old, "1.2"}, {dir, "1.3"}} {
		code, _, stderr := runDlgen(t, "-lang", "python", "-dlpack-version", g.release, "-out", g.dir)
		require.Equal(t, 0, code, stderr)
	}
	require.NotEmpty(t, of(dir))
	require.NotEqual(t, of(old), of(dir))
	compiled := filepath.Join(dir, "python", "dlpack_cython.cpython-312-x86_64-linux-gnu.so")
	rebuild := "; rebuild it: cd " + filepath.Join(dir, "python") + " && cythonize -i dlpack_cython.pyx\n"
	beside := strings.TrimPrefix(of(dir), "dlgen fingerprint: ")
	for _, c := range []struct {
		name, content, report string
	}{
		{"built from these sources", "\x7fELF\x00" + of(dir) + "\x00", ""},
		{"built for another release", "\x7fELF\x00" + of(old) + "\x00", compiled + " was built from " +
			strings.TrimPrefix(of(old), "dlgen fingerprint: ") + ", not from the sources beside it (" + beside + ")" + rebuild},
		{"built before fingerprints", "\x7fELF\x00", compiled + " carries no dlgen fingerprint: it was built from sources older than those beside it (" + beside + ")" + rebuild},
	} {
		require.NoError(t, os.WriteFile(compiled, []byte(c.content), 0o755))
		code, stdout, stderr := runDlgen(t, "-lang", "python", "-dlpack-version", "1.3", "-out", dir, "-check")
		assert.Equal(t, c.report, stdout, c.name)
		if c.report == "" {
			assert.Equal(t, 0, code, "%s: %s", c.name, stderr)
			continue
		}
		assert.Equal(t, 1, code, c.name)
		assert.Equal(t, "dlgen: a compiled module under "+dir+" is older than its sources: rebuild it as above\n", stderr, c.name)
	}
}
