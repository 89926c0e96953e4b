package rust

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/dlgen/dlgen/tests/internal/tooltest"
)

// TestCrateOfEveryRelease checks each release's crate: rustfmt's layout,
// clippy with warnings as errors for every feature set (declarations
// alone, the default safe layer, and PyO3), the safe layer's tests, and a
// build with the oldest Rust it declares.
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
				out := RunCargo(t, dir, "test")
				fmt.Printf("v%s: %s", v, summary(out))
			}
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
