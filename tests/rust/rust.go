// Package rust proves the crate `dlgen -lang rust` writes: for every
// release it is rustfmt- and clippy-clean with every feature set, builds
// with the rust-version it declares, and cargo test runs the tests it
// carries (layout, safe layer, doctests; the safe layer's under Miri too),
// leaving nothing in the crate that its .gitignore does not cover; its layout equals
// the C compiler's of the same release on the host, field by field; on
// every target rustc knows, its cfg picks the data model of the IR, the
// model the C header picks on the same platform, or none (and no wrong
// one); it builds for a target of each cfg branch; its import verdicts and
// messages are the Go runtime's on a corpus of tensors; and a PyO3
// extension built with maturin (pyo3ext/) exchanges with NumPy and PyTorch.
//
// Crates are written to .cache/rust/crates/vX.Y and built in one
// CARGO_TARGET_DIR, .cache/rust/target, so that reruns are incremental;
// cargo runs offline (scripts/deps.sh fetches the crates it needs).
package rust

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dlgen/dlgen/internal/backend"
	_ "github.com/dlgen/dlgen/internal/backend/all"
	"github.com/dlgen/dlgen/internal/backend/rust"
	"github.com/dlgen/dlgen/internal/generate"
	"github.com/dlgen/dlgen/internal/ir"
	"github.com/dlgen/dlgen/internal/schema"
	"github.com/dlgen/dlgen/tests/internal/tooltest"
)

// cacheDir is where crates and build products live, under the checkout.
func cacheDir() string { return filepath.Join(tooltest.Root(), ".cache", "rust") }

// toolchain returns the values of kind in toolchain.txt, which
// scripts/deps.sh installs.
func toolchain(t testing.TB, kind string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(tooltest.Root(), "tests", "rust", "toolchain.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(l), " "); ok && k == kind {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		t.Fatalf("toolchain.txt names no %s", kind)
	}
	return out
}

// Nightly is the pinned nightly toolchain (Miri, build-std, target specs).
func Nightly(t testing.TB) string { return toolchain(t, "nightly")[0] }

// MSRV is the toolchain of the rust-version the crate declares.
const MSRV = rust.RustVersion + ".0"

// Cargo is the cargo executable.
func Cargo(t testing.TB) string {
	t.Helper()
	if home, err := os.UserHomeDir(); err == nil {
		if p := filepath.Join(home, ".cargo", "bin", "cargo"); fileExists(p) {
			return p
		}
	}
	return tooltest.Require(t, "cargo")
}

// Rustc is the rustc executable next to cargo.
func Rustc(t testing.TB) string {
	t.Helper()
	p := filepath.Join(filepath.Dir(Cargo(t)), "rustc")
	if !fileExists(p) {
		return tooltest.Require(t, "rustc")
	}
	return p
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Env is the environment cargo runs in: the shared target directory, the
// venv's Python for PyO3, offline.
func Env() []string {
	root := tooltest.Root()
	return []string{
		"CARGO_TARGET_DIR=" + filepath.Join(cacheDir(), "target"),
		"CARGO_NET_OFFLINE=true",
		"CARGO_TERM_COLOR=never",
		"PYO3_PYTHON=" + filepath.Join(root, ".venv", "bin", "python"),
	}
}

// RunCargo runs cargo in dir and fails t with its output if it fails.
func RunCargo(t testing.TB, dir string, args ...string) string {
	t.Helper()
	return tooltest.Run(t, dir, Env(), Cargo(t), args...)
}

var (
	crateMu sync.Mutex
	crates  = map[ir.Version]string{}
)

// Releases are the releases of the embedded schema.
func Releases(t testing.TB) (*ir.Schema, []ir.Version) {
	t.Helper()
	s, err := schema.Default()
	if err != nil {
		t.Fatal(err)
	}
	var out []ir.Version
	for _, r := range s.Releases {
		out = append(out, r.Version)
	}
	return s, out
}

// Crate writes the crate of release v under .cache/rust/crates, once per
// test binary, and returns its directory: dlgen's files and nothing else
// (what cargo left there before is removed, so that what a run leaves can
// be told). Unchanged files are not rewritten, so cargo rebuilds only what
// changed.
func Crate(t testing.TB, s *ir.Schema, v ir.Version) string {
	t.Helper()
	crateMu.Lock()
	defer crateMu.Unlock()
	if dir, ok := crates[v]; ok {
		return dir
	}
	out := filepath.Join(cacheDir(), "crates", "v"+v.String())
	if _, err := generate.Write(out, crateFiles(t, s, v)); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(out, filepath.FromSlash(rust.Dir))
	for _, extra := range NotGenerated(t, s, v, dir) {
		if err := os.RemoveAll(filepath.Join(dir, extra)); err != nil {
			t.Fatal(err)
		}
	}
	crates[v] = dir
	return dir
}

func crateFiles(t testing.TB, s *ir.Schema, v ir.Version) []backend.File {
	t.Helper()
	files, err := generate.Files(generate.Options{Schema: s, SchemaName: schema.DefaultFile, Version: v, Langs: []string{"rust"}})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// NotGenerated lists what lies in dir, the crate of release v, that dlgen
// does not write there: slash-separated paths relative to dir, a directory
// as a whole.
func NotGenerated(t testing.TB, s *ir.Schema, v ir.Version, dir string) []string {
	t.Helper()
	written := map[string]bool{}
	for _, f := range crateFiles(t, s, v) {
		rel, ok := strings.CutPrefix(f.Path, rust.Dir+"/")
		for ok {
			written[rel] = true
			rel, _, ok = cutLast(rel, "/")
		}
	}
	var extra []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil || rel == "." || written[filepath.ToSlash(rel)] {
			return err
		}
		extra = append(extra, filepath.ToSlash(rel))
		if d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return extra
}

// cutLast is strings.Cut at the last sep.
func cutLast(s, sep string) (before, after string, found bool) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, "", false
}

// WriteFile writes content to path, creating its directory, unless the
// file already holds it (so that cargo sees nothing new).
func WriteFile(t testing.TB, path string, content []byte) {
	t.Helper()
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, content) {
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
}

// HasSafeLayer reports whether release v has versioned tensors, and so the
// safe layer and the PyO3 glue.
func HasSafeLayer(s *ir.Schema, v ir.Version) bool {
	m := s.At(v).Versions.Major
	return m != nil && m.Value > 0
}

// passed sums the tests cargo test's output says passed, over its test
// binaries.
func passed(t testing.TB, out string) int {
	t.Helper()
	total := 0
	for _, l := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "test result: ok. "); ok {
			var n int
			if _, err := fmt.Sscanf(rest, "%d passed", &n); err != nil {
				t.Fatalf("cannot read %q: %v", l, err)
			}
			total += n
		}
	}
	return total
}

// Probe writes source as the program name of a crate beside the crate of
// dir, which it depends on (with the safe layer if the probe crate's
// feature "safe" is on), and returns the probe crate's directory: tests
// add programs there, not to the generated crate.
func Probe(t testing.TB, dir, name string, source []byte) string {
	t.Helper()
	probe := filepath.Join(filepath.Dir(filepath.Dir(dir)), "probe")
	crateManifest, err := os.ReadFile(filepath.Join(dir, "Cargo.toml"))
	if err != nil {
		t.Fatal(err)
	}
	features := ""
	if bytes.Contains(crateManifest, []byte("\nsafe = ")) {
		features = "\n[features]\nsafe = [\"dlpack/safe\"]\n"
	}
	manifest := `[package]
name = "probe"
version = "0.0.0"
edition = "2021"
publish = false
` + features + `
[dependencies]
dlpack = { path = "../rust/dlpack", default-features = false }

[workspace]
`
	WriteFile(t, filepath.Join(probe, "Cargo.toml"), []byte(manifest))
	WriteFile(t, filepath.Join(probe, "src", "bin", name+".rs"), source)
	return probe
}
