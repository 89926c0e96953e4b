// Command wheels packages dlgen as Python wheels, one per platform, as ruff
// and uv ship their binaries: each wheel holds dlgen cross-built for its
// platform (CGO_ENABLED=0, so it links no C library) under
// dlgen-VERSION.data/scripts/, which pip installs as the dlgen command. No
// Python code is involved and nothing is compiled on the user's side.
//
//	go run ./scripts/wheels [-out DIR]   # make wheels: DIR is dist
//
// It writes, for the release in package dlgen,
//
//	dlgen-VERSION-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_1_x86_64.whl
//	dlgen-VERSION-py3-none-manylinux_2_17_aarch64.manylinux2014_aarch64.musllinux_1_1_aarch64.whl
//	dlgen-VERSION-py3-none-macosx_N_0_x86_64.whl
//	dlgen-VERSION-py3-none-macosx_N_0_arm64.whl
//	dlgen-VERSION-py3-none-win_amd64.whl
//
// and the DLPack conformance kit of the newest DLPack release (what `dlgen
// -lang conformance` writes, pure Python) as
//
//	dlpack_conformance-VERSION-py3-none-any.whl
//
// with the metadata of the kit's pyproject.toml (backend/conformance's
// Project), which is what pip builds from the generated directory.
//
// N is the oldest macOS the Go toolchain's binaries run on, read from
// each Mach-O binary's build-version load command. The Linux binaries are
// static, hence valid for glibc (manylinux) and musl (musllinux) systems
// alike. The wheels are byte-identical from run to run and machine to
// machine for one Go toolchain: the build is -trimpath with no VCS stamp and
// a fixed instruction-set level (GOAMD64=v1, GOARM64=v8.0), the archive has
// fixed timestamps and file order.
package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"debug/macho"
	"encoding/base64"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/dlgen/dlgen"
	_ "github.com/dlgen/dlgen/internal/backend/all"
	"github.com/dlgen/dlgen/internal/backend/conformance"
	"github.com/dlgen/dlgen/internal/generate"
	"github.com/dlgen/dlgen/internal/schema"
)

// platform is one wheel: a Go target and the wheel's platform tags (for
// macOS, derived from the binary instead).
type platform struct {
	goos, goarch string
	tags         []string
}

var platforms = []platform{
	{"linux", "amd64", []string{"manylinux_2_17_x86_64", "manylinux2014_x86_64", "musllinux_1_1_x86_64"}},
	{"linux", "arm64", []string{"manylinux_2_17_aarch64", "manylinux2014_aarch64", "musllinux_1_1_aarch64"}},
	{"darwin", "amd64", nil},
	{"darwin", "arm64", nil},
	{"windows", "amd64", []string{"win_amd64"}},
}

// name is the distribution's name on PyPI and in file names.
const name = "dlgen"

// summary and description are the wheel's METADATA text.
const (
	summary     = "Generates DLPack bindings (a C header, Go, Python, Rust) from one versioned schema"
	description = `dlgen turns one YAML schema of the DLPack tensor-exchange ABI into a C header
that replaces upstream dlpack.h (any release from v0.6), a pure-Go package with
the same layout, Python modules (ctypes, standard library only; Cython) that
implement the DLPack protocol, and a no_std Rust crate. This wheel installs the dlgen command,
a static binary: no Go and no compiler needed.

    dlgen -lang python -out vendor/            # vendor/python/
    dlgen -lang python -out vendor/ -check     # in CI: diff and exit 1 if stale
`
)

// modified is every archive member's timestamp: the earliest a zip can say.
var modified = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

func main() {
	log.SetFlags(0)
	log.SetPrefix("wheels: ")
	out := flag.String("out", "dist", "directory to write the wheels to")
	flag.Parse()
	if flag.NArg() > 0 {
		log.Fatalf("unexpected argument %q", flag.Arg(0))
	}
	root, err := moduleRoot()
	if err != nil {
		log.Fatal(err)
	}
	license, err := os.ReadFile(filepath.Join(root, "LICENSE"))
	if err != nil {
		log.Fatal(err)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	work, err := os.MkdirTemp("", "dlgen-wheels")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(work)
	for _, p := range platforms {
		binary, err := build(root, work, p)
		if err != nil {
			log.Fatal(err)
		}
		if p.goos == "darwin" {
			if p.tags, err = macOSTags(binary, p.goarch); err != nil {
				log.Fatalf("%s/%s: %v", p.goos, p.goarch, err)
			}
		}
		wheel, err := archive(p, binary, license)
		if err != nil {
			log.Fatal(err)
		}
		path := filepath.Join(*out, fmt.Sprintf("%s-%s-py3-none-%s.whl", name, dlgen.Version, strings.Join(p.tags, ".")))
		if err := os.WriteFile(path, wheel, 0o644); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s (%d bytes)\n", path, len(wheel))
	}
	path, wheel, err := kitWheel(license)
	if err != nil {
		log.Fatal(err)
	}
	path = filepath.Join(*out, path)
	if err := os.WriteFile(path, wheel, 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s (%d bytes)\n", path, len(wheel))
}

// kitWheel returns the name and content of the conformance kit's wheel:
// the package dlpack_conformance as `dlgen -lang conformance` writes it for
// the newest DLPack release, its metadata (README.md the description), its
// command and pytest plugin, and the licence.
func kitWheel(license []byte) (string, []byte, error) {
	s, err := schema.Default()
	if err != nil {
		return "", nil, err
	}
	files, err := generate.Files(generate.Options{Schema: s, SchemaName: schema.DefaultFile, Langs: []string{"conformance"}})
	if err != nil {
		return "", nil, err
	}
	var members []member
	var readme []byte
	for _, f := range files { // sorted by path
		rel := strings.TrimPrefix(f.Path, conformance.Dir+"/")
		switch {
		case strings.HasPrefix(rel, conformance.Package+"/"):
			members = append(members, member{rel, 0o644, f.Content})
		case rel == "README.md":
			readme = f.Content
		}
	}
	if len(members) == 0 || readme == nil {
		return "", nil, fmt.Errorf("the conformance backend wrote no %s/ or no README.md", conformance.Package)
	}
	dist := conformance.Package + "-" + dlgen.Version
	wheelFile := fmt.Sprintf("Wheel-Version: 1.0\nGenerator: dlgen scripts/wheels (%s)\nRoot-Is-Purelib: true\nTag: py3-none-any\n", dlgen.Version)
	members = append(members,
		member{dist + ".dist-info/METADATA", 0o644, conformance.Metadata(s.At(s.Newest()), readme, "LICENSE")},
		member{dist + ".dist-info/WHEEL", 0o644, []byte(wheelFile)},
		member{dist + ".dist-info/entry_points.txt", 0o644, conformance.EntryPoints()},
		member{dist + ".dist-info/licenses/LICENSE", 0o644, license},
	)
	wheel, err := zipWheel(dist, members)
	return dist + "-py3-none-any.whl", wheel, err
}

// member is a file of a wheel.
type member struct {
	path string
	mode os.FileMode
	data []byte
}

// moduleRoot is the directory of dlgen's go.mod, wherever this runs from.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %v", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("not inside dlgen's module")
	}
	return filepath.Dir(gomod), nil
}

// build cross-compiles cmd/dlgen for p and returns the binary.
func build(root, work string, p platform) ([]byte, error) {
	exe := filepath.Join(work, p.goos+"-"+p.goarch, executable(p))
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", exe, "./cmd/dlgen")
	cmd.Dir = root
	// The last value of a variable wins: the user's GOFLAGS or GOAMD64 must
	// not change what is shipped.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.goos, "GOARCH="+p.goarch,
		"GOAMD64=v1", "GOARM64=v8.0", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build for %s/%s: %v\n%s", p.goos, p.goarch, err, out)
	}
	return os.ReadFile(exe)
}

func executable(p platform) string {
	if p.goos == "windows" {
		return name + ".exe"
	}
	return name
}

// Mach-O load commands that carry the oldest macOS a binary runs on.
const (
	lcVersionMinMacOSX = 0x24
	lcBuildVersion     = 0x32
)

// macOSTags returns the wheel platform tag of a Mach-O binary: its minimum
// macOS, as pip names it (from macOS 11 on, the minor version is always 0
// in tags), and its architecture.
func macOSTags(binary []byte, goarch string) ([]string, error) {
	f, err := macho.NewFile(bytes.NewReader(binary))
	if err != nil {
		return nil, err
	}
	for _, l := range f.Loads {
		raw := l.Raw()
		if len(raw) < 16 {
			continue
		}
		var packed uint32 // xxxx.yy.zz nibbles
		switch f.ByteOrder.Uint32(raw) {
		case lcBuildVersion:
			packed = f.ByteOrder.Uint32(raw[12:])
		case lcVersionMinMacOSX:
			packed = f.ByteOrder.Uint32(raw[8:])
		default:
			continue
		}
		major, minor := packed>>16, packed>>8&0xff
		if major >= 11 {
			minor = 0
		}
		arch := map[string]string{"amd64": "x86_64", "arm64": "arm64"}[goarch]
		return []string{fmt.Sprintf("macosx_%d_%d_%s", major, minor, arch)}, nil
	}
	return nil, fmt.Errorf("no minimum macOS version in the binary's load commands")
}

// archive returns the wheel of p: the binary, METADATA, WHEEL, the licence
// and RECORD, in that order.
func archive(p platform, binary, license []byte) ([]byte, error) {
	dist := name + "-" + dlgen.Version
	var wheelFile strings.Builder
	fmt.Fprintf(&wheelFile, "Wheel-Version: 1.0\nGenerator: dlgen scripts/wheels (%s)\nRoot-Is-Purelib: false\n", dlgen.Version)
	for _, tag := range p.tags {
		fmt.Fprintf(&wheelFile, "Tag: py3-none-%s\n", tag)
	}
	metadata := fmt.Sprintf("Metadata-Version: 2.4\nName: %s\nVersion: %s\nSummary: %s\n"+
		"Project-URL: Source, https://github.com/dlgen/dlgen\n"+
		"Project-URL: Changelog, https://github.com/dlgen/dlgen/blob/v%s/CHANGELOG.md\n"+
		"License-Expression: Apache-2.0\nLicense-File: LICENSE\n"+
		"Description-Content-Type: text/markdown\n\n%s", name, dlgen.Version, summary, dlgen.Version, description)
	return zipWheel(dist, []member{
		{dist + ".data/scripts/" + executable(p), 0o755, binary},
		{dist + ".dist-info/METADATA", 0o644, []byte(metadata)},
		{dist + ".dist-info/WHEEL", 0o644, []byte(wheelFile.String())},
		{dist + ".dist-info/licenses/LICENSE", 0o644, license},
	})
}

// zipWheel archives members in their order, then RECORD, dist's, which
// lists them with their digests.
func zipWheel(dist string, members []member) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	var record strings.Builder
	for _, m := range members {
		if err := add(zw, m.path, m.mode, m.data); err != nil {
			return nil, err
		}
		sum := sha256.Sum256(m.data)
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", m.path, base64.RawURLEncoding.EncodeToString(sum[:]), len(m.data))
	}
	recordPath := dist + ".dist-info/RECORD"
	fmt.Fprintf(&record, "%s,,\n", recordPath)
	if err := add(zw, recordPath, 0o644, []byte(record.String())); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func add(zw *zip.Writer, path string, mode os.FileMode, data []byte) error {
	h := &zip.FileHeader{Name: path, Method: zip.Deflate, Modified: modified}
	h.SetMode(mode)
	w, err := zw.CreateHeader(h)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}
