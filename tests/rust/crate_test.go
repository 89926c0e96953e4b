package rust

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dlgen/dlgen/internal/generate"
	"github.com/dlgen/dlgen/internal/ir"
	"github.com/dlgen/dlgen/tests/internal/tooltest"
)

// TestCrateOfEveryRelease checks each release's crate: rustfmt's layout,
// clippy with warnings as errors for every feature set (declarations
// alone, the default safe layer, and PyO3), the tests it carries (layout,
// safe layer, doctests: docs/rust.md's cargo test), which leave nothing
// to commit in the crate, and a build with the oldest Rust it declares.
func TestCrateOfEveryRelease(t *testing.T) {
	s, releases := Releases(t)
	for _, v := range releases {
		t.Run("v"+v.String(), func(t *testing.T) {
			dir := Crate(t, s, v)
			RunCargo(t, dir, "fmt", "--check")
			RunCargo(t, dir, "clippy", "--all-targets", "--no-default-features", "--", "-D", "warnings")
			if HasSafeLayer(s, v) {
				RunCargo(t, dir, "clippy", "--all-targets", "--", "-D", "warnings")
				RunCargo(t, dir, "clippy", "--all-targets", "--all-features", "--", "-D", "warnings")
			}
			// The tests the crate carries, as a user runs them in a vendored
			// copy: the build output goes to CARGO_TARGET_DIR, outside it.
			tests := passed(t, RunCargo(t, dir, "test", "--lib", "--tests"))
			doctests := passed(t, RunCargo(t, dir, "test", "--doc"))
			fmt.Printf("v%s: cargo test: %d tests, %d doctests passed\n", v, tests, doctests)
			if tests == 0 || (HasSafeLayer(s, v) && doctests == 0) {
				t.Errorf("cargo test ran %d tests and %d doctests of the v%s crate; want its layout tests, and from 1.0 its safe layer's tests and doctests", tests, doctests, v)
			}
			leftovers(t, s, v, dir)
			// The documentation, links included: every release's, and the
			// newest one's for each feature set.
			featureSets := [][]string{nil}
			if v == releases[len(releases)-1] {
				featureSets = append(featureSets, []string{"--no-default-features"}, []string{"--all-features"})
			}
			for _, features := range featureSets {
				tooltest.Run(t, dir, append(Env(), "RUSTDOCFLAGS=-D warnings"), Cargo(t),
					append([]string{"doc", "--no-deps"}, features...)...)
			}
			// The declared rust-version, without PyO3 (which asks for its
			// own): rustc alone, as the declarations and the safe layer need
			// no other crate.
			for _, features := range [][]string{nil, {"--cfg", `feature="safe"`}} {
				if features != nil && !HasSafeLayer(s, v) {
					continue
				}
				args := append([]string{"+" + MSRV, "--edition", "2021", "--crate-type", "lib", "--crate-name", "dlpack",
					"--emit", "metadata", "--out-dir", t.TempDir(), "-D", "warnings", filepath.Join("src", "lib.rs")}, features...)
				tooltest.Run(t, dir, nil, Rustc(t), args...)
			}
		})
	}
}

// leftovers fails t if cargo left in the crate dir anything but what the
// .gitignore dlgen writes there ignores (no target/, whatever the
// environment; the Cargo.lock cargo always writes, ignored), or anything
// that dlgen -check reports.
func leftovers(t *testing.T, s *ir.Schema, v ir.Version, dir string) {
	t.Helper()
	if diff, err := generate.Check(filepath.Dir(filepath.Dir(dir)), crateFiles(t, s, v)); err != nil || diff != "" {
		t.Errorf("dlgen -check of the v%s crate after cargo test: %v\n%s", v, err, diff)
	}
	ignore, err := os.ReadFile(filepath.Join(dir, ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	ignored := map[string]bool{}
	for _, l := range strings.Split(string(ignore), "\n") {
		if name, ok := strings.CutPrefix(strings.TrimSpace(l), "/"); ok {
			ignored[strings.TrimSuffix(name, "/")] = true
		}
	}
	for _, extra := range NotGenerated(t, s, v, dir) {
		if extra == "target" || !ignored[extra] {
			t.Errorf("cargo test left %s in the v%s crate (its .gitignore covers %v)", extra, v, ignored)
		}
	}
}
