// Package dist tests how dlgen reaches the projects that use it: the Python
// wheels that `make wheels` writes (scripts/wheels), one per platform, and
// the conformance kit's (kit_test.go), the kit's GitHub Action, the
// pre-commit hook of .pre-commit-hooks.yaml, the //go:generate recipe of
// cmd/dlgen's package doc, the README's Go tool recipe and first command
// (readme_test.go), and the release workflow (workflow_test.go).
//
// The wheels are built once per test binary. Each is checked as pip reads
// it (file name, WHEEL tags, METADATA, RECORD hashes) and its binary as its
// platform's loader would (ELF, Mach-O or PE header and architecture); pip
// picks each for its platform; the Linux x86-64 one is installed with pip
// into a fresh venv and run there with nothing but the venv on PATH.
package dist

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/dlgen/dlgen"
	"github.com/dlgen/dlgen/tests/internal/tooltest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	wheelsOnce sync.Once
	wheelsDir  string
	wheelsErr  error
	wheelsOut  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if wheelsDir != "" {
		os.RemoveAll(wheelsDir)
	}
	os.Exit(code)
}

// buildWheels runs scripts/wheels into a new directory.
func buildWheels(dir string) (string, error) {
	return tooltest.Try(tooltest.Root(), nil, "go", "run", "./scripts/wheels", "-out", dir)
}

// wheels builds the wheels once and returns their paths, sorted.
func wheels(t *testing.T) []string {
	t.Helper()
	wheelsOnce.Do(func() {
		wheelsDir, wheelsErr = os.MkdirTemp("", "dlgen-wheels-test")
		if wheelsErr == nil {
			wheelsOut, wheelsErr = buildWheels(wheelsDir)
		}
	})
	if wheelsErr != nil {
		t.Fatalf("building the wheels: %v\n%s", wheelsErr, wheelsOut)
	}
	paths, err := filepath.Glob(filepath.Join(wheelsDir, "dlgen-*.whl"))
	require.NoError(t, err)
	sort.Strings(paths)
	return paths
}

// allWheels is every wheel `make wheels` writes: dlgen's and the
// conformance kit's (kit_test.go).
func allWheels(t *testing.T) []string {
	return append(wheels(t), kitWheel(t))
}

// target is a platform a wheel is for, as the file name's platform tags
// spell it, and what its binary must be.
type target struct {
	platform *regexp.Regexp // the file name's platform tags
	exe      string         // the script pip installs
	check    func(t *testing.T, binary []byte, platform []string)
}

var targets = []target{
	{regexp.MustCompile(`^manylinux_2_17_x86_64\.manylinux2014_x86_64\.musllinux_1_1_x86_64$`), "dlgen", staticELF(elf.EM_X86_64)},
	{regexp.MustCompile(`^manylinux_2_17_aarch64\.manylinux2014_aarch64\.musllinux_1_1_aarch64$`), "dlgen", staticELF(elf.EM_AARCH64)},
	{regexp.MustCompile(`^macosx_\d+_\d+_x86_64$`), "dlgen", machO(macho.CpuAmd64)},
	{regexp.MustCompile(`^macosx_\d+_\d+_arm64$`), "dlgen", machO(macho.CpuArm64)},
	{regexp.MustCompile(`^win_amd64$`), "dlgen.exe", consolePE(pe.IMAGE_FILE_MACHINE_AMD64)},
}

var wheelName = regexp.MustCompile(`^dlgen-` + regexp.QuoteMeta(dlgen.Version) + `-py3-none-([a-z0-9_.]+)\.whl$`)

// platformOf returns the platform tags of a wheel's file name.
func platformOf(t *testing.T, path string) string {
	m := wheelName.FindStringSubmatch(filepath.Base(path))
	require.NotNil(t, m, "%s is not named dlgen-%s-py3-none-PLATFORM.whl", filepath.Base(path), dlgen.Version)
	return m[1]
}

func TestOneWheelPerPlatform(t *testing.T) {
	paths := wheels(t)
	require.Len(t, paths, len(targets), "%v", paths)
	for _, tg := range targets {
		n := 0
		for _, p := range paths {
			if tg.platform.MatchString(platformOf(t, p)) {
				n++
			}
		}
		assert.Equal(t, 1, n, "wheels for %v", tg.platform)
	}
}

func TestWheelsAreWhatPipAndTheirPlatformExpect(t *testing.T) {
	license, err := os.ReadFile(filepath.Join(tooltest.Root(), "LICENSE"))
	require.NoError(t, err)
	for _, path := range wheels(t) {
		platform := platformOf(t, path)
		t.Run(platform, func(t *testing.T) {
			var tg *target
			for i := range targets {
				if targets[i].platform.MatchString(platform) {
					tg = &targets[i]
				}
			}
			require.NotNil(t, tg, "a wheel for no known platform")
			zr, err := zip.OpenReader(path)
			require.NoError(t, err)
			defer zr.Close()
			dist := "dlgen-" + dlgen.Version
			script := dist + ".data/scripts/" + tg.exe
			members := map[string][]byte{}
			for _, f := range zr.File {
				members[f.Name] = read(t, f)
				if f.Name == script {
					assert.Equal(t, os.FileMode(0o755), f.Mode().Perm(), "the script is executable")
				}
			}
			var names []string
			for name := range members {
				names = append(names, name)
			}
			assert.ElementsMatch(t, []string{script, dist + ".dist-info/METADATA", dist + ".dist-info/WHEEL",
				dist + ".dist-info/licenses/LICENSE", dist + ".dist-info/RECORD"}, names)

			checkRecord(t, members, dist+".dist-info/RECORD")

			wheel := fields(string(members[dist+".dist-info/WHEEL"]))
			assert.Equal(t, []string{"1.0"}, wheel["Wheel-Version"])
			assert.Equal(t, []string{"false"}, wheel["Root-Is-Purelib"], "a platform wheel")
			var tags []string
			for _, p := range strings.Split(platform, ".") {
				tags = append(tags, "py3-none-"+p)
			}
			assert.Equal(t, tags, wheel["Tag"], "WHEEL's tags are the file name's")

			metadata := fields(string(members[dist+".dist-info/METADATA"]))
			assert.Equal(t, []string{"2.4"}, metadata["Metadata-Version"])
			assert.Equal(t, []string{"dlgen"}, metadata["Name"])
			assert.Equal(t, []string{dlgen.Version}, metadata["Version"])
			assert.Equal(t, []string{"Apache-2.0"}, metadata["License-Expression"])
			assert.Equal(t, []string{"LICENSE"}, metadata["License-File"])
			assert.Equal(t, license, members[dist+".dist-info/licenses/LICENSE"])

			tg.check(t, members[script], strings.Split(platform, "."))
		})
	}
}

func read(t *testing.T, f *zip.File) []byte {
	rc, err := f.Open()
	require.NoError(t, err)
	defer rc.Close()
	data, err := io.ReadAll(rc)
	require.NoError(t, err)
	return data
}

// checkRecord checks that RECORD lists every other member once, with its
// size and its sha256 digest as wheels spell it, and itself without either.
func checkRecord(t *testing.T, members map[string][]byte, record string) {
	rows, err := csv.NewReader(bytes.NewReader(members[record])).ReadAll()
	require.NoError(t, err)
	listed := map[string]bool{}
	for _, row := range rows {
		require.Len(t, row, 3, "%v", row)
		name := row[0]
		assert.False(t, listed[name], "%s listed twice", name)
		listed[name] = true
		data, ok := members[name]
		if !assert.True(t, ok, "RECORD lists %s, which the wheel lacks", name) {
			continue
		}
		if name == record {
			assert.Equal(t, []string{record, "", ""}, row)
			continue
		}
		sum := sha256.Sum256(data)
		assert.Equal(t, "sha256="+base64.RawURLEncoding.EncodeToString(sum[:]), row[1], name)
		assert.Equal(t, strconv.Itoa(len(data)), row[2], name)
	}
	assert.Len(t, listed, len(members), "every member is in RECORD")
}

// fields parses the "Key: value" header of WHEEL or METADATA (up to the
// first blank line, where METADATA's description starts).
func fields(text string) map[string][]string {
	out := map[string][]string{}
	for _, line := range strings.Split(text, "\n") {
		if line == "" {
			break
		}
		k, v, _ := strings.Cut(line, ": ")
		out[k] = append(out[k], v)
	}
	return out
}

// staticELF checks a Linux executable for machine: 64-bit little-endian,
// and static (no interpreter, no dynamic section), which is what lets one
// binary claim glibc and musl systems alike.
func staticELF(machine elf.Machine) func(*testing.T, []byte, []string) {
	return func(t *testing.T, binary []byte, _ []string) {
		f, err := elf.NewFile(bytes.NewReader(binary))
		require.NoError(t, err, "an ELF file")
		assert.Equal(t, elf.ELFCLASS64, f.Class)
		assert.Equal(t, elf.ELFDATA2LSB, f.Data)
		assert.Equal(t, machine, f.Machine)
		assert.Equal(t, elf.ET_EXEC, f.Type)
		for _, p := range f.Progs {
			assert.NotEqual(t, elf.PT_INTERP, p.Type, "a dynamic loader is named")
			assert.NotEqual(t, elf.PT_DYNAMIC, p.Type, "dynamically linked")
		}
	}
}

// Mach-O load commands and values not in debug/macho.
const (
	lcCodeSignature = 0x1d
	lcBuildVersion  = 0x32
	platformMacOS   = 1
)

// machO checks a macOS executable for cpu: 64-bit, built for macOS no newer
// than the wheel's tag claims, and, on arm64, code-signed (Apple silicon
// runs no unsigned binary).
func machO(cpu macho.Cpu) func(*testing.T, []byte, []string) {
	return func(t *testing.T, binary []byte, platform []string) {
		f, err := macho.NewFile(bytes.NewReader(binary))
		require.NoError(t, err, "a Mach-O file")
		assert.Equal(t, macho.Magic64, f.Magic)
		assert.Equal(t, cpu, f.Cpu)
		assert.Equal(t, macho.TypeExec, f.Type)
		var tagMajor, tagMinor uint32
		_, err = fmt.Sscanf(platform[0], "macosx_%d_%d_", &tagMajor, &tagMinor)
		require.NoError(t, err, platform[0])
		var minos uint32
		signed := false
		for _, l := range f.Loads {
			raw := l.Raw()
			switch f.ByteOrder.Uint32(raw) {
			case lcBuildVersion:
				assert.Equal(t, uint32(platformMacOS), f.ByteOrder.Uint32(raw[8:]), "built for macOS")
				minos = f.ByteOrder.Uint32(raw[12:])
			case lcCodeSignature:
				signed = true
			}
		}
		require.NotZero(t, minos, "no LC_BUILD_VERSION")
		major, minor := minos>>16, minos>>8&0xff
		assert.True(t, major < tagMajor || major == tagMajor && minor <= tagMinor,
			"the binary needs macOS %d.%d, the tag says %d.%d", major, minor, tagMajor, tagMinor)
		if cpu == macho.CpuArm64 {
			assert.True(t, signed, "an arm64 binary needs a code signature")
		}
	}
}

// consolePE checks a Windows executable for machine: a 64-bit console
// program (so that it prints into the terminal that runs it).
func consolePE(machine uint16) func(*testing.T, []byte, []string) {
	return func(t *testing.T, binary []byte, _ []string) {
		f, err := pe.NewFile(bytes.NewReader(binary))
		require.NoError(t, err, "a PE file")
		assert.Equal(t, machine, f.Machine)
		assert.NotZero(t, f.Characteristics&pe.IMAGE_FILE_EXECUTABLE_IMAGE, "an executable image")
		oh, ok := f.OptionalHeader.(*pe.OptionalHeader64)
		require.True(t, ok, "a PE32+ optional header")
		assert.Equal(t, uint16(pe.IMAGE_SUBSYSTEM_WINDOWS_CUI), oh.Subsystem)
	}
}

func TestWheelsAreReproducible(t *testing.T) {
	first := allWheels(t)
	dir := t.TempDir()
	out, err := buildWheels(dir)
	require.NoError(t, err, out)
	for _, path := range first {
		want, err := os.ReadFile(path)
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(dir, filepath.Base(path)))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(want, got), "%s differs between two builds", filepath.Base(path))
	}
}

// python returns the Python that runs pip, skipping the test without one.
func python(t *testing.T) string {
	py := tooltest.Require(t, "python3")
	if out, err := tooltest.Try("", nil, py, "-m", "pip", "--version"); err != nil {
		tooltest.Missing(t, "pip is not installed for "+py+": "+out)
	}
	return py
}

// pip asks pip to resolve dlgen from the built wheels for a platform, as
// `pip install --platform` on another machine would, and returns the file
// it picks, "" for none.
func pip(t *testing.T, py, platform string) string {
	report := filepath.Join(t.TempDir(), "report.json")
	out, err := tooltest.Try("", nil, py, "-m", "pip", "install", "--dry-run", "--quiet", "--disable-pip-version-check",
		"--no-index", "--find-links", wheelsDir, "--only-binary=:all:", "--platform", platform, "--python-version", "3.12",
		"--target", t.TempDir(), "--report", report, "dlgen")
	if err != nil {
		require.Contains(t, out, "No matching distribution found for dlgen", "pip failed otherwise")
		return ""
	}
	var r struct {
		Install []struct {
			DownloadInfo struct{ URL string } `json:"download_info"`
		}
	}
	data, err := os.ReadFile(report)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &r))
	require.Len(t, r.Install, 1, "%s", data)
	return filepath.Base(r.Install[0].DownloadInfo.URL)
}

func TestPipPicksEachWheelForItsPlatform(t *testing.T) {
	py := python(t)
	paths := wheels(t)
	for platform, want := range map[string]*regexp.Regexp{
		"manylinux2014_aarch64": targets[1].platform,
		"musllinux_1_1_x86_64":  targets[0].platform, // Alpine
		"macosx_13_0_x86_64":    targets[2].platform, // a newer macOS takes the wheel of an older one
		"macosx_15_0_arm64":     targets[3].platform,
		"win_amd64":             targets[4].platform,
		"macosx_10_9_x86_64":    nil, // older than any macOS Go supports
	} {
		got := pip(t, py, platform)
		if want == nil {
			assert.Empty(t, got, "pip on %s", platform)
			continue
		}
		var name string
		for _, p := range paths {
			if want.MatchString(platformOf(t, p)) {
				name = filepath.Base(p)
			}
		}
		assert.Equal(t, name, got, "pip on %s", platform)
	}
}

// TestWheelInstallsAWorkingDlgenWithoutGo installs the Linux x86-64 wheel
// with pip into a new venv and runs the dlgen command it installs by name,
// with only the venv's bin directory on PATH.
func TestWheelInstallsAWorkingDlgenWithoutGo(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("the Linux x86-64 wheel does not run on %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	py := python(t)
	var wheel string
	for _, p := range wheels(t) {
		if targets[0].platform.MatchString(platformOf(t, p)) {
			wheel = p
		}
	}
	venv := filepath.Join(t.TempDir(), "venv")
	tooltest.Run(t, "", nil, py, "-m", "venv", "--without-pip", venv)
	tooltest.Run(t, "", nil, py, "-m", "pip", "--python", filepath.Join(venv, "bin", "python"), "install",
		"--quiet", "--disable-pip-version-check", "--no-index", "--no-deps", wheel)

	home := t.TempDir()
	// dlgen runs by name, through a shell whose PATH is the venv's bin only.
	run := func(args ...string) (code int, stdout, stderr string) {
		cmd := exec.Command("sh", append([]string{"-c", `if command -v go >/dev/null; then echo "go is on PATH" >&2; exit 99; fi; exec dlgen "$@"`, "sh"}, args...)...)
		cmd.Env = []string{"PATH=" + filepath.Join(venv, "bin"), "HOME=" + home}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode(), out.String(), errb.String()
		}
		require.NoError(t, err)
		return 0, out.String(), errb.String()
	}

	code, stdout, stderr := run("-version")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "dlgen "+dlgen.Tag+"\n", stdout)

	out := t.TempDir()
	code, _, stderr = run("-lang", "python", "-out", out)
	require.Equal(t, 0, code, stderr)
	module := filepath.Join(out, "python", "dlpack_ctypes.py")
	text, err := os.ReadFile(module)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(text), "# "+dlgen.Marker+"\n"), "the module starts with the marker")

	code, stdout, stderr = run("-lang", "python", "-out", out, "-check")
	assert.Equal(t, 0, code, stderr)
	assert.Empty(t, stdout)
	code, stdout, stderr = run("-lang", "python", "-out", filepath.Join(tooltest.Root(), "generated"), "-check")
	assert.Equal(t, 0, code, "the wheel's dlgen writes what generated/ holds: %s%s", stdout, stderr)

	require.NoError(t, os.WriteFile(module, append(text, "# edited by hand\n"...), 0o644))
	code, stdout, stderr = run("-lang", "python", "-out", out, "-check")
	assert.Equal(t, 1, code, stderr)
	assert.Contains(t, stdout, "\n-# edited by hand\n")
	assert.Contains(t, stderr, "is stale")
}
