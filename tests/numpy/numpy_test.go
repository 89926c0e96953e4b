package numpy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/dlgen/dlgen/internal/backend/all"
	"github.com/dlgen/dlgen/internal/generate"
	"github.com/dlgen/dlgen/internal/ir"
	"github.com/dlgen/dlgen/internal/schema"
	"github.com/dlgen/dlgen/tests/internal/tooltest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lean are the meson options of the build: no SIMD dispatch, no BLAS or
// LAPACK, no optimisation. Only DLPack is under test.
var lean = []string{
	"--buildtype=plain", "-Ddisable-optimization=true", "-Dcpu-baseline=none", "-Dcpu-dispatch=none",
	"-Ddisable-highway=true", "-Ddisable-intel-sort=true", "-Ddisable-svml=true",
	"-Dblas=none", "-Dlapack=none", "-Dallow-noblas=true",
}

func TestNumPyBuildsWithDlgenHeaderAndPassesItsDLPackTests(t *testing.T) {
	sdist := Sdist(t)
	cache := filepath.Dir(sdist)
	bin := filepath.Join(cache, "venv", "bin")
	if _, err := os.Stat(filepath.Join(bin, "cython")); err != nil {
		tooltest.Missing(t, "the NumPy build venv is not in .cache/numpy/venv; scripts/deps.sh makes it")
	}
	tooltest.Require(t, "cc")
	tooltest.Require(t, "c++")
	// The same environment every time: meson regenerates, and ninja then
	// rebuilds everything, when the tools it finds change.
	env := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}
	python := filepath.Join(bin, "python")

	header := dlgenHeader(t, "1.0")
	src, build, site := filepath.Join(cache, "src"), filepath.Join(cache, "build"), filepath.Join(cache, "site")
	unpack(t, sdist, src, build, site)
	vendored := filepath.Join(src, filepath.FromSlash(VendoredHeader))
	original := SdistFile(t, sdist, VendoredHeader)
	require.Contains(t, string(original), "typedef struct DLManagedTensorVersioned {", "NumPy's own copy adds the typedef")
	if old, err := os.ReadFile(vendored); err != nil || !bytes.Equal(old, header) {
		require.NoError(t, os.WriteFile(vendored, header, 0o644)) // only when it changed: ninja goes by mtime
	}

	start := time.Now()
	if _, err := os.Stat(filepath.Join(build, "build.ninja")); err != nil {
		setup := append([]string{filepath.Join(src, "vendored-meson", "meson", "meson.py"), "setup", build, src,
			"-Dpython.purelibdir=" + site, "-Dpython.platlibdir=" + site}, lean...)
		tooltest.Run(t, cache, env, python, setup...)
	}
	out := tooltest.Run(t, cache, env, filepath.Join(bin, "ninja"), "-C", build)
	built := time.Since(start)
	fmt.Printf("NumPy build with dlgen's v1.0 header: %s (%s)\n", built.Round(time.Second), lastLine(out))

	// The object of dlpack.c was compiled from dlgen's header.
	object, command := dlpackCompile(t, build)
	deps := tooltest.Run(t, build, env, filepath.Join(bin, "ninja"), "-t", "deps", object)
	require.Contains(t, deps, filepath.ToSlash(filepath.Join("..", "src", VendoredHeader)), "dlpack.c no longer includes the vendored header")

	// Installed only when the header changed since the last install.
	stamp := filepath.Join(site, ".dlgen-header-sha256")
	sum := sha256.Sum256(header)
	if old, _ := os.ReadFile(stamp); string(old) != hex.EncodeToString(sum[:]) {
		tooltest.Run(t, cache, env, python, filepath.Join(src, "vendored-meson", "meson", "meson.py"),
			"install", "-C", build, "--no-rebuild", "--quiet", "--tags", "runtime,python-runtime,tests")
		require.NoError(t, os.WriteFile(stamp, []byte(hex.EncodeToString(sum[:])), 0o644))
	}

	// NumPy's own DLPack tests, against this build (not the source tree, not
	// another NumPy: the run starts in an empty directory).
	run := []string{"PYTHONPATH=" + site, "PYTHONDONTWRITEBYTECODE=1"}
	where := tooltest.Run(t, t.TempDir(), append(env, run...), python, "-c", "import numpy; print(numpy.__version__, numpy._core._multiarray_umath.__file__)")
	require.Contains(t, where, site, "NumPy was imported from elsewhere")
	report := tooltest.Run(t, t.TempDir(), append(env, run...), python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
		filepath.Join(site, "numpy", "_core", "tests", "test_dlpack.py"))
	m := regexp.MustCompile(`(\d+) passed`).FindStringSubmatch(report)
	require.NotNil(t, m, report)
	passed, _ := strconv.Atoi(m[1])
	assert.GreaterOrEqual(t, passed, 80, report)
	assert.NotRegexp(t, `\d+ (failed|error|skipped)`, report)
	fmt.Printf("NumPy %s's DLPack tests with dlgen's header: %d passed (%s)\n", strings.Fields(where)[0], passed, time.Since(start).Round(time.Second))

	// Without the backported typedef (upstream's v1.0 declarations), NumPy's
	// dlpack.c does not compile.
	faithful := strings.Replace(command, " -o "+object+" ", " -DDLGEN_BACKPORTS=0 -fdiagnostics-color=never -o "+filepath.Join(t.TempDir(), "dlpack.o")+" ", 1)
	require.NotEqual(t, command, faithful)
	failed, err := tooltest.Try(build, append(env, "LC_ALL=C"), "sh", "-c", faithful)
	tooltest.Exited(t, err, "NumPy's dlpack.c compiled without the typedef it uses")
	assert.Contains(t, failed, "error: unknown type name 'DLManagedTensorVersioned'")
}

// dlgenHeader renders dlgen's C header of release v.
func dlgenHeader(t *testing.T, v string) []byte {
	s, err := schema.Default()
	require.NoError(t, err)
	version, err := ir.ParseVersion(v)
	require.NoError(t, err)
	files, err := generate.Files(generate.Options{Schema: s, SchemaName: schema.DefaultFile, Version: version, Langs: []string{"c"}})
	require.NoError(t, err)
	for _, f := range files {
		if f.Path == "c/dlpack/dlpack.h" {
			return f.Content
		}
	}
	t.Fatalf("dlgen wrote no c/dlpack/dlpack.h for %s", v)
	return nil
}

// unpack extracts the sdist into src unless it is there already; a new
// sdist (or checkout path) starts the build afresh.
func unpack(t *testing.T, sdist, src, build, site string) {
	mark := filepath.Join(src, ".dlgen-sdist")
	want := sdist + "\n"
	if old, _ := os.ReadFile(mark); string(old) == want {
		return
	}
	for _, dir := range []string{src, build, site} {
		require.NoError(t, os.RemoveAll(dir))
	}
	require.NoError(t, os.MkdirAll(src, 0o755))
	tooltest.Run(t, src, nil, "tar", "-xzf", sdist, "--strip-components=1")
	require.NoError(t, os.WriteFile(mark, []byte(want), 0o644))
}

// dlpackCompile returns the object file of NumPy's dlpack.c and the command
// that compiles it, from the build's compile_commands.json.
func dlpackCompile(t *testing.T, build string) (object, command string) {
	data, err := os.ReadFile(filepath.Join(build, "compile_commands.json"))
	require.NoError(t, err)
	var commands []struct{ File, Command, Output string }
	require.NoError(t, json.Unmarshal(data, &commands))
	for _, c := range commands {
		if strings.HasSuffix(filepath.ToSlash(c.File), "_core/src/multiarray/dlpack.c") {
			return c.Output, c.Command
		}
	}
	t.Fatal("no compile command for numpy/_core/src/multiarray/dlpack.c")
	return "", ""
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
