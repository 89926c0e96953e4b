package rust

import (
	"archive/zip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dlgen/dlgen/tests/internal/tooltest"
	"github.com/stretchr/testify/require"
)

// TestPyO3ExtensionWithNumPyAndPyTorch builds pyo3ext (a PyO3 extension
// over generated/rust/dlpack) with maturin for the venv's Python, and runs
// its pytest suite against NumPy and PyTorch (with tests/python on the
// path, for the kinds of tensor it shares with test_torch_exchange.py).
func TestPyO3ExtensionWithNumPyAndPyTorch(t *testing.T) {
	root := tooltest.Root()
	maturin := filepath.Join(cacheDir(), "maturin", "bin", "maturin")
	if _, err := os.Stat(maturin); err != nil {
		tooltest.Missing(t, "maturin is not installed in .cache/rust/maturin")
	}
	python := filepath.Join(root, ".venv", "bin", "python")
	if out, err := tooltest.Try("", nil, python, "-c", "import numpy, torch, pytest"); err != nil {
		tooltest.Missing(t, "the venv lacks numpy, torch or pytest: "+out)
	}
	RunCargo(t, filepath.Join(root, "tests", "rust", "pyo3ext"), "fmt", "--check")
	wheels := t.TempDir()
	// A target directory of its own: maturin builds PyO3 for another
	// environment than cargo clippy does, and they would rebuild each
	// other's PyO3 every run.
	env := append(Env(), "CARGO_TARGET_DIR="+filepath.Join(cacheDir(), "target-maturin"),
		"PATH="+filepath.Dir(Cargo(t))+":"+os.Getenv("PATH"))
	tooltest.Run(t, root, env, maturin, "build", "--locked",
		"--manifest-path", filepath.Join("tests", "rust", "pyo3ext", "Cargo.toml"), "--interpreter", python, "--out", wheels)
	found, err := filepath.Glob(filepath.Join(wheels, "*.whl"))
	require.NoError(t, err)
	require.Len(t, found, 1, "one wheel")
	site := t.TempDir()
	unzip(t, found[0], site)
	out := tooltest.Run(t, root, []string{"PYTHONPATH=" + site + string(os.PathListSeparator) + filepath.Join(root, "tests", "python")}, python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
		filepath.Join("tests", "rust", "pyo3ext", "test_pyo3.py"))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	fmt.Printf("PyO3 extension with NumPy and PyTorch: %s\n", lines[len(lines)-1])
}

// unzip extracts a wheel into dir.
func unzip(t *testing.T, wheel, dir string) {
	t.Helper()
	z, err := zip.OpenReader(wheel)
	require.NoError(t, err)
	defer z.Close()
	for _, f := range z.File {
		path := filepath.Join(dir, filepath.FromSlash(f.Name))
		require.True(t, strings.HasPrefix(path, dir+string(filepath.Separator)), f.Name)
		if f.FileInfo().IsDir() {
			continue
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		r, err := f.Open()
		require.NoError(t, err)
		w, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
		require.NoError(t, err)
		_, err = io.Copy(w, r)
		require.NoError(t, err)
		require.NoError(t, w.Close())
		r.Close()
	}
}
