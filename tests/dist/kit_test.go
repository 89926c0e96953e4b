package dist

// The conformance kit as maintainers install it (docs/conformance-kit.md):
// the wheel `make wheels` writes, and the generated conformance/ directory,
// each pip-installed into a fresh venv, give a dlpack-conformance command
// and `python -m dlpack_conformance` that run from /, reproducers that run
// from /, and a pytest plugin that makes each case a test; the GitHub
// Action's script (conformance/run.sh) installs and runs the kit as the
// action would. NumPy, pytest and hatchling (the kit's build backend) come
// from PyPI through pip's cache.

import (
	"archive/zip"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/dlgen/dlgen"
	_ "github.com/dlgen/dlgen/internal/backend/all"
	"github.com/dlgen/dlgen/internal/backend/conformance"
	"github.com/dlgen/dlgen/internal/generate"
	"github.com/dlgen/dlgen/internal/schema"
	"github.com/dlgen/dlgen/tests/internal/tooltest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// kitWheel returns the path of the conformance kit's wheel.
func kitWheel(t *testing.T) string {
	wheels(t)
	path := filepath.Join(wheelsDir, conformance.Package+"-"+dlgen.Version+"-py3-none-any.whl")
	_, err := os.Stat(path)
	require.NoError(t, err, "make wheels writes the kit's wheel")
	return path
}

// kitSources are the files of the newest release's kit, by their path
// under conformance/.
func kitSources(t *testing.T) map[string][]byte {
	s, err := schema.Default()
	require.NoError(t, err)
	files, err := generate.Files(generate.Options{Schema: s, SchemaName: schema.DefaultFile, Langs: []string{"conformance"}})
	require.NoError(t, err)
	out := map[string][]byte{}
	for _, f := range files {
		out[strings.TrimPrefix(f.Path, conformance.Dir+"/")] = f.Content
	}
	return out
}

func zipMembers(t *testing.T, path string) map[string][]byte {
	zr, err := zip.OpenReader(path)
	require.NoError(t, err)
	defer zr.Close()
	members := map[string][]byte{}
	for _, f := range zr.File {
		members[f.Name] = read(t, f)
	}
	return members
}

// metadataFields is METADATA's header without the fields that say which
// tool wrote it.
func metadataFields(text string) map[string][]string {
	f := fields(text)
	delete(f, "Metadata-Version")
	delete(f, "License-File")
	for k := range f {
		sort.Strings(f[k])
	}
	return f
}

func TestKitWheelIsThePackageWithItsMetadata(t *testing.T) {
	members := zipMembers(t, kitWheel(t))
	sources := kitSources(t)
	dist := conformance.Package + "-" + dlgen.Version + ".dist-info/"
	checkRecord(t, members, dist+"RECORD")

	var want, got []string
	for p := range sources {
		if strings.HasPrefix(p, conformance.Package+"/") {
			want = append(want, p)
		}
	}
	for name, data := range members {
		if strings.HasPrefix(name, dist) {
			continue
		}
		got = append(got, name)
		assert.Equal(t, string(sources[name]), string(data), "%s is what dlgen -lang conformance writes", name)
		assert.True(t, strings.HasPrefix(string(data), "# "+dlgen.Marker+"\n"), "%s starts with the marker", name)
	}
	assert.ElementsMatch(t, want, got, "the wheel holds the package, all of it")
	for _, m := range []string{"__main__.py", "pytest_plugin.py", "reference.py", "dlpack_ctypes.py", "corpus.py"} {
		assert.Contains(t, got, conformance.Package+"/"+m)
	}

	wheel := fields(string(members[dist+"WHEEL"]))
	assert.Equal(t, []string{"true"}, wheel["Root-Is-Purelib"], "pure Python")
	assert.Equal(t, []string{"py3-none-any"}, wheel["Tag"])
	metadata := fields(string(members[dist+"METADATA"]))
	assert.Equal(t, []string{"dlpack-conformance"}, metadata["Name"])
	assert.Equal(t, []string{dlgen.Version}, metadata["Version"], "dlgen's version")
	assert.Equal(t, []string{"Apache-2.0"}, metadata["License-Expression"])
	assert.Equal(t, []string{">=3.10"}, metadata["Requires-Python"])
	assert.Contains(t, metadata["Classifier"], "Framework :: Pytest")
	assert.Contains(t, metadata["Project-URL"], "Documentation, https://github.com/dlgen/dlgen/blob/"+dlgen.Tag+"/docs/conformance-kit.md")
	_, description, _ := strings.Cut(string(members[dist+"METADATA"]), "\n\n")
	assert.Equal(t, string(sources["README.md"]), description, "the description is the kit's README")
	assert.Equal(t, "[console_scripts]\ndlpack-conformance = dlpack_conformance.__main__:command\n"+
		"dlpack-sanitize = dlpack_conformance.sanitize:command\n\n"+
		"[pytest11]\ndlpack_conformance = dlpack_conformance.pytest_plugin\n", string(members[dist+"entry_points.txt"]))
}

// venvRun runs a program of a venv by name from dir with only the venv's
// bin on PATH (and the system's, for the library's own needs), and returns
// its exit status and output.
func venvRun(t *testing.T, venv, dir string, env []string, name string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(venv, "bin", name), args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + filepath.Join(venv, "bin") + ":/usr/bin:/bin", "HOME=" + t.TempDir()}, env...)
	return status(t, cmd)
}

// status runs cmd and returns its exit status and output; it fails t when
// cmd cannot start.
func status(t *testing.T, cmd *exec.Cmd) (int, string) {
	t.Helper()
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), string(out)
	}
	require.NoError(t, err)
	return 0, string(out)
}

// newVenv makes a venv and pip-installs what into it (wheels, directories,
// requirements from PyPI); a failure to reach PyPI skips the test
// (fails it under DLGEN_REQUIRE_TOOLS=1).
func newVenv(t testing.TB, dir string, withPip bool, what ...string) error {
	py := tooltest.Require(t, "python3")
	venv := []string{"-m", "venv", dir}
	if !withPip {
		venv = append(venv, "--without-pip")
	}
	if out, err := tooltest.Try("", nil, py, venv...); err != nil {
		return fmt.Errorf("python3 -m venv: %v\n%s", err, out)
	}
	args := append([]string{"-m", "pip", "--python", filepath.Join(dir, "bin", "python"), "install", "--quiet",
		"--disable-pip-version-check"}, what...)
	if out, err := tooltest.Try("", []string{"PYTHONPATH="}, py, args...); err != nil {
		return fmt.Errorf("pip install %s: %v\n%s", strings.Join(what, " "), err, out)
	}
	return nil
}

var (
	kitVenvOnce sync.Once
	kitVenvDir  string
	kitVenvErr  error
)

// kitVenv is a venv with the kit's wheel, NumPy, pytest and pip (which
// run.sh calls), made once.
func kitVenv(t *testing.T) string {
	wheel := kitWheel(t)
	tooltest.Require(t, "python3")
	kitVenvOnce.Do(func() {
		kitVenvDir = filepath.Join(wheelsDir, "venv")
		kitVenvErr = newVenv(t, kitVenvDir, false, wheel, "numpy", "pytest", "pip")
	})
	if kitVenvErr != nil {
		tooltest.Missing(t, kitVenvErr.Error())
	}
	return kitVenvDir
}

type kitResult struct {
	Case, Verdict, Message, Reproducer string
}

func readResults(t *testing.T, path string) map[string]kitResult {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var list []kitResult
	require.NoError(t, json.Unmarshal(data, &list))
	out := map[string]kitResult{}
	for _, r := range list {
		out[r.Case] = r
	}
	return out
}

func TestKitWheelRunsFromAnyDirectoryAndSoDoItsReproducers(t *testing.T) {
	venv := kitVenv(t)
	out := filepath.Join(t.TempDir(), "out.json")
	code, text := venvRun(t, venv, "/", nil, "dlpack-conformance", "numpy", "--case", "consumer/versioned/1-d", "--json", out)
	require.Equal(t, 0, code, text)
	assert.Equal(t, "pass", readResults(t, out)["consumer/versioned/1-d"].Verdict)

	code, text = venvRun(t, venv, "/", nil, "python", "-m", "dlpack_conformance", "numpy", "--case", "major-version-0", "--json", out)
	require.Equal(t, 1, code, "NumPy reads a tensor of major version 0: %s", text)
	failed := readResults(t, out)["consumer/corpus/major-version-0"]
	require.Equal(t, "fail", failed.Verdict, text)

	// The reproducer, saved anywhere and run from /, fails the same way.
	script := filepath.Join(t.TempDir(), "reproducer.py")
	require.NoError(t, os.WriteFile(script, []byte(failed.Reproducer), 0o644))
	code, text = venvRun(t, venv, "/", nil, "python", script)
	assert.Equal(t, 1, code, text)
	assert.Contains(t, text, "dlpack_conformance.spec.Violation: "+failed.Message)
}

// The installed dlpack-sanitize command runs a program as python does, its
// arguments and exit status its own, and says how it is called.
func TestKitSanitizeCommandRunsAProgram(t *testing.T) {
	venv := kitVenv(t)
	dir := t.TempDir()
	program := "import sys\nimport numpy as np\nprint(np.from_dlpack(np.arange(3)).tolist(), sys.argv[1:])\nsys.exit(4)\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "prog.py"), []byte(program), 0o644))
	code, text := venvRun(t, venv, dir, nil, "dlpack-sanitize", "prog.py", "--json", "x")
	assert.Equal(t, 4, code, text)
	assert.Equal(t, "[0, 1, 2] ['--json', 'x']\n", text)
	code, text = venvRun(t, venv, "/", nil, "dlpack-sanitize")
	assert.Equal(t, 2, code, text)
	assert.Contains(t, text, "\ndlpack-sanitize: error: name a PROGRAM.py, or -m MODULE\n")
}

// The installed command speaks as the user called it, and a reader that
// stops early (`| head`) ends it quietly, as it does python -m.
func TestKitCommandNamesItselfAndStopsQuietlyOnAClosedPipe(t *testing.T) {
	venv := kitVenv(t)
	code, text := venvRun(t, venv, "/", nil, "dlpack-conformance")
	assert.Equal(t, 2, code, text)
	assert.Contains(t, text, "\ndlpack-conformance: name at least one LIBRARY, such as numpy\n")
	assert.NotContains(t, text, "python -m")
	code, text = venvRun(t, venv, "/", nil, "python", "-m", "dlpack_conformance")
	assert.Equal(t, 2, code, text)
	assert.Contains(t, text, "\npython -m dlpack_conformance: name at least one LIBRARY, such as numpy\n")

	// 30 lists of NumPy's cases: more than a pipe holds, so the kit writes
	// after head has gone.
	many := strings.Repeat(" numpy", 30)
	for _, command := range []string{"dlpack-conformance", "python -m dlpack_conformance"} {
		cmd := exec.Command("bash", "-c", command+many+" --list | head -n 1; exit ${PIPESTATUS[0]}")
		cmd.Dir = "/"
		cmd.Env = []string{"PATH=" + filepath.Join(venv, "bin") + ":/usr/bin:/bin", "HOME=" + t.TempDir()}
		code, text = status(t, cmd)
		assert.Equal(t, 141, code, text)                               // as a shell reports a process SIGPIPE ended (__main__.run)
		assert.Regexp(t, `^(producer|consumer)/\S+\n$`, text, command) // one case id, no traceback
	}
}

// adapterFile is an adapter written as docs/conformance-kit.md shows, for
// NumPy: it lives in its maintainer's repository, and keeps working with the
// kit installed.
const adapterFile = `from dlpack_conformance import Adapter


class MyLib(Adapter):
    module = "numpy"
    dtypes = ("bool", "int32", "float32", "float64")
    lacks = frozenset({"negative-step"})

    def asarray(self, values, dtype):
        return f"xp.array({values!r}, dtype=xp.{dtype})"

    def permute(self, x, axes):
        return f"xp.transpose({x}, {axes!r})"

    def make_readonly(self, x):
        return f"{x}.flags.writeable = False"

    def read(self):
        return "y.tolist()"


ADAPTER = MyLib()
`

func TestKitWheelRunsAnAdapterFileFromItsOwnDirectory(t *testing.T) {
	venv := kitVenv(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "mylib_adapter.py"), []byte(adapterFile), 0o644))
	out := filepath.Join(dir, "out.json")
	code, text := venvRun(t, venv, dir, nil, "dlpack-conformance", "./mylib_adapter.py", "--case", "consumer/versioned/1-d",
		"--case", "producer/layout/contiguous/max_version=1.3", "--case", "producer/layout/negative-step", "--json", out)
	require.Equal(t, 0, code, text)
	results := readResults(t, out)
	assert.Equal(t, "pass", results["consumer/versioned/1-d"].Verdict, text)
	assert.Equal(t, "pass", results["producer/layout/contiguous/max_version=1.3"].Verdict, text)
	skipped := 0
	for id, r := range results {
		if strings.HasPrefix(id, "producer/layout/negative-step") {
			assert.Equal(t, "skip", r.Verdict, "%s: the adapter says numpy lacks it", id)
			skipped++
		}
	}
	assert.NotZero(t, skipped)
}

// pytestOutcomes runs pytest in dir and returns its exit status, output and
// the outcome of each test (-rA's lines), by node id (a skip by the first
// word of its reason).
func pytestOutcomes(t *testing.T, venv, dir string, args ...string) (int, string, map[string]string) {
	code, text := venvRun(t, venv, dir, nil, "pytest", append([]string{"-rA", "-p", "no:cacheprovider"}, args...)...)
	outcomes := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^(PASSED|FAILED|XFAIL|SKIPPED \[\d+\] [^:]*:\d+:) (\S+)`).FindAllStringSubmatch(text, -1) {
		outcome, id := m[1], m[2]
		if strings.HasPrefix(outcome, "SKIPPED") {
			outcome, id = "SKIPPED", strings.TrimSuffix(id, ":")
		}
		outcomes[id] = outcome
	}
	return code, text, outcomes
}

func TestKitPytestPluginMakesEachCaseATest(t *testing.T) {
	venv := kitVenv(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "test_mine.py"), []byte("def test_mine():\n    pass\n"), 0o644))

	// Installed, the plugin is loaded but adds nothing until a library is named.
	code, text, outcomes := pytestOutcomes(t, venv, dir)
	assert.Equal(t, 0, code, text)
	assert.Equal(t, map[string]string{"test_mine.py::test_mine": "PASSED"}, outcomes, text)
	code, text = venvRun(t, venv, dir, nil, "pytest", "--help")
	require.Equal(t, 0, code, text)
	assert.Contains(t, text, "--dlpack-library=LIBRARY")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "xfail.txt"), []byte("numpy: consumer/corpus/major-version-0  # NumPy reads major 0\n"), 0o644))
	cases := []string{"--dlpack-case", "consumer/versioned/1-d", "--dlpack-case", "major-version-0", "--dlpack-case",
		"null-shape-one-dimension", "--dlpack-case", "producer/exchange-api/contiguous", "--dlpack-case", "consumer/versioned/vector-lanes"}
	id := func(c string) string { return "dlpack-conformance[numpy]::" + c }
	want := map[string]string{
		"test_mine.py::test_mine":                      "PASSED",
		id("consumer/versioned/1-d"):                   "PASSED",
		id("consumer/versioned/vector-lanes"):          "PASSED",  // a warn
		id("consumer/corpus/null-shape-one-dimension"): "FAILED",  // a crash
		"producer/exchange-api/contiguous":             "SKIPPED", // -rA names a skip by where it was raised; its reason names the case
	}

	code, text, outcomes = pytestOutcomes(t, venv, dir, append([]string{"-p", "dlpack_conformance", "--dlpack-library", "numpy"}, cases...)...)
	assert.Equal(t, 1, code, text)
	want[id("consumer/corpus/major-version-0")] = "FAILED"
	assert.Equal(t, want, outcomes, text)
	assert.Contains(t, text, "fail: consumer/corpus/major-version-0: from_dlpack accepted a tensor of version (0, 0)")
	assert.Contains(t, text, "crash: consumer/corpus/null-shape-one-dimension: the process died of SIGSEGV")
	assert.Contains(t, text, "reproducer:\nimport numpy as xp\nfrom dlpack_conformance import reference\n")
	assert.Contains(t, text, "DLPackWarning: consumer/versioned/vector-lanes: warn:")
	assert.Regexp(t, `SKIPPED \[1\] .*: producer/exchange-api/contiguous: ndarray publishes no __dlpack_c_exchange_api__`, text)

	// The xfail file, named on the command line or in the ini file.
	want[id("consumer/corpus/major-version-0")] = "XFAIL"
	_, text, outcomes = pytestOutcomes(t, venv, dir, append([]string{"--dlpack-library", "numpy", "--dlpack-xfail", "xfail.txt"}, cases...)...)
	assert.Equal(t, want, outcomes, text)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pytest.ini"), []byte("[pytest]\ndlpack_library = numpy\ndlpack_xfail = xfail.txt\n"), 0o644))
	_, text, outcomes = pytestOutcomes(t, venv, dir, cases...)
	assert.Equal(t, want, outcomes, text)

	// -k selects cases as any test.
	code, text, outcomes = pytestOutcomes(t, venv, dir, "-k", "versioned/1-d")
	assert.Equal(t, 0, code, text)
	assert.Equal(t, map[string]string{id("consumer/versioned/1-d"): "PASSED"}, outcomes, text)
}

func TestKitInstallsFromTheGeneratedDirectory(t *testing.T) {
	out := t.TempDir()
	tooltest.Run(t, "", nil, tooltest.Dlgen(t), "-lang", "conformance", "-out", out)
	project := filepath.Join(out, conformance.Dir)
	pyproject, err := os.ReadFile(filepath.Join(project, "pyproject.toml"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(pyproject), "# "+dlgen.Marker+"\n"), "pyproject.toml carries the marker")
	before := listFiles(t, project)

	venv := filepath.Join(t.TempDir(), "venv")
	if err := newVenv(t, venv, false, project); err != nil {
		tooltest.Missing(t, err.Error())
	}
	assert.Equal(t, before, listFiles(t, project), "pip builds without writing into the kit's directory")
	tooltest.Run(t, "", nil, tooltest.Dlgen(t), "-lang", "conformance", "-out", out, "-check")

	// What pip installed is the wheel's package and metadata.
	wheel := zipMembers(t, kitWheel(t))
	dist := conformance.Package + "-" + dlgen.Version + ".dist-info/"
	site, err := filepath.Glob(filepath.Join(venv, "lib", "python3*", "site-packages"))
	require.NoError(t, err)
	require.Len(t, site, 1)
	for name, data := range wheel {
		if strings.HasPrefix(name, dist) {
			continue
		}
		installed, err := os.ReadFile(filepath.Join(site[0], filepath.FromSlash(name)))
		if assert.NoError(t, err, name) {
			assert.Equal(t, string(data), string(installed), name)
		}
	}
	metadata, err := os.ReadFile(filepath.Join(site[0], dist+"METADATA"))
	require.NoError(t, err)
	assert.Equal(t, metadataFields(string(wheel[dist+"METADATA"])), metadataFields(string(metadata)),
		"pyproject.toml and scripts/wheels say the same")
	_, description, _ := strings.Cut(string(metadata), "\n\n")
	_, wheelDescription, _ := strings.Cut(string(wheel[dist+"METADATA"]), "\n\n")
	assert.Equal(t, wheelDescription, description)
	entryPoints, err := os.ReadFile(filepath.Join(site[0], dist+"entry_points.txt"))
	require.NoError(t, err)
	assert.Equal(t, string(wheel[dist+"entry_points.txt"]), string(entryPoints))

	code, text := venvRun(t, venv, "/", nil, "dlpack-conformance", "numpy", "--list")
	require.Equal(t, 0, code, text)
	assert.Contains(t, strings.Fields(text), "consumer/versioned/1-d")
}

func listFiles(t *testing.T, dir string) []string {
	var out []string
	require.NoError(t, filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return err
	}))
	return out
}

// TestConformanceActionRunsItsScriptWithEveryInput checks action.yml: its
// one step runs run.sh with each input in the variable run.sh reads.
func TestConformanceActionRunsItsScriptWithEveryInput(t *testing.T) {
	root := tooltest.Root()
	data, err := os.ReadFile(filepath.Join(root, "conformance", "action.yml"))
	require.NoError(t, err)
	var action struct {
		Inputs map[string]struct {
			Required bool
			Default  *string
		}
		Outputs map[string]struct{ Value string }
		Runs    struct {
			Using string
			Steps []struct {
				ID, Shell, Run string
				Env            map[string]string
			}
		}
	}
	require.NoError(t, yaml.Unmarshal(data, &action))
	assert.Equal(t, "composite", action.Runs.Using)
	require.Len(t, action.Runs.Steps, 1)
	step := action.Runs.Steps[0]
	assert.Equal(t, `"$GITHUB_ACTION_PATH/run.sh"`, step.Run)
	assert.Equal(t, "bash", step.Shell)
	script, err := os.ReadFile(filepath.Join(root, "conformance", "run.sh"))
	require.NoError(t, err)
	assert.Len(t, step.Env, len(action.Inputs), "one variable per input")
	for name, in := range action.Inputs {
		variable := "DLPACK_" + strings.ToUpper(name)
		assert.Equal(t, "${{ inputs."+name+" }}", step.Env[variable], "input %s", name)
		assert.Contains(t, string(script), "${"+variable, "run.sh reads %s", variable)
		assert.Equal(t, name == "library", in.Required, "only library is required")
	}
	assert.Equal(t, "${{ steps."+step.ID+".outputs.json }}", action.Outputs["json"].Value)
}

func TestConformanceActionScript(t *testing.T) {
	root := tooltest.Root()
	script := filepath.Join(root, "conformance", "run.sh")
	run := func(dir string, env ...string) (int, string) {
		cmd := exec.Command(script)
		cmd.Dir = dir
		cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}, env...)
		return status(t, cmd)
	}

	// Without a kit named, the wheel of this release from its GitHub
	// release; the inputs become the kit's arguments. A stand-in Python
	// records what it is asked.
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	fake := filepath.Join(dir, "python")
	require.NoError(t, os.WriteFile(fake, []byte("#!/bin/sh\necho \"$*\" >> "+calls+"\n"), 0o755))
	output := filepath.Join(dir, "github-output")
	code, text := run(dir, "DLPACK_PYTHON="+fake, "DLPACK_LIBRARY=numpy ./my_adapter.py", "DLPACK_XFAIL=x.txt",
		"DLPACK_ARGS=--case consumer/ -q", "GITHUB_OUTPUT="+output)
	require.Equal(t, 0, code, text)
	logged, err := os.ReadFile(calls)
	require.NoError(t, err)
	wheel := fmt.Sprintf("https://github.com/dlgen/dlgen/releases/download/%s/dlpack_conformance-%s-py3-none-any.whl", dlgen.Tag, dlgen.Version)
	assert.Equal(t, "-m pip install --disable-pip-version-check --quiet "+wheel+"\n"+
		"-m dlpack_conformance numpy ./my_adapter.py --json dlpack-conformance.json --xfail x.txt --case consumer/ -q\n", string(logged))
	gh, err := os.ReadFile(output)
	require.NoError(t, err)
	assert.Equal(t, "json=dlpack-conformance.json\n", string(gh))

	code, text = run(dir, "DLPACK_PYTHON="+fake)
	assert.Equal(t, 2, code, text)
	assert.Contains(t, text, "name the library to test")

	// For real: the wheel `make wheels` writes, in a venv with NumPy; the
	// run's status is the kit's.
	venv := kitVenv(t)
	xfail := filepath.Join(dir, "xfail.txt")
	require.NoError(t, os.WriteFile(xfail, []byte("numpy: consumer/corpus/major-version-0\n"), 0o644))
	summary := filepath.Join(dir, "summary.md")
	inputs := []string{"DLPACK_PYTHON=" + filepath.Join(venv, "bin", "python"), "DLPACK_KIT=" + kitWheel(t),
		"DLPACK_LIBRARY=numpy", "DLPACK_ARGS=--case consumer/versioned/1-d --case major-version-0", "GITHUB_STEP_SUMMARY=" + summary}
	code, text = run(dir, inputs...)
	assert.Equal(t, 1, code, "NumPy fails major-version-0: %s", text)
	require.FileExists(t, filepath.Join(dir, "dlpack-conformance.json"), text)
	results := readResults(t, filepath.Join(dir, "dlpack-conformance.json"))
	assert.Equal(t, "pass", results["consumer/versioned/1-d"].Verdict)
	assert.Equal(t, "fail", results["consumer/corpus/major-version-0"].Verdict)
	code, text = run(dir, append(inputs, "DLPACK_XFAIL="+xfail, "DLPACK_JSON=xfailed.json")...)
	assert.Equal(t, 0, code, text)
	assert.Equal(t, "xfail", readResults(t, filepath.Join(dir, "xfailed.json"))["consumer/corpus/major-version-0"].Verdict)
	text2, err := os.ReadFile(summary)
	require.NoError(t, err)
	assert.Regexp(t, "(?s)^### DLPack conformance\n```\n== numpy [^:]*: 2 cases", string(text2))
}
