// Package numpy proves dlgen's DLPack v1.0 header a drop-in replacement for
// the patched copy NumPy vendors: it builds NumPy 2.4 from its PyPI sdist
// with dlgen's header in that copy's place, runs NumPy's own DLPack tests
// (numpy/_core/tests/test_dlpack.py) against the build, and shows that
// NumPy's dlpack.c needs the typedef dlgen backports (it does not compile
// with DLGEN_BACKPORTS=0, upstream's v1.0 declarations exactly).
//
// scripts/deps.sh fetches the pinned sdist and the build and test tools into
// .cache/numpy (a venv with Cython, ninja, pytest, hypothesis). The build is
// kept lean for a 2-core machine (no SIMD dispatch, no BLAS, -O0) and cached
// under .cache/numpy: a warm run rebuilds only what includes a changed
// header, and reinstalls only when the header changed. Sdist and SdistFile
// give other tests the sdist's files (NumPy's patched copy of dlpack.h).
package numpy

import (
	"archive/tar"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dlgen/dlgen/tests/internal/tooltest"
	"github.com/stretchr/testify/require"
)

// VendoredHeader is where NumPy keeps its copy of dlpack.h.
const VendoredHeader = "numpy/_core/src/common/dlpack/dlpack.h"

// Sdist returns the NumPy sdist scripts/deps.sh fetched, or skips.
func Sdist(t testing.TB) string {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(tooltest.Root(), ".cache", "numpy", "numpy-2.4.*.tar.gz"))
	if len(matches) != 1 {
		tooltest.Missing(t, "the NumPy 2.4 sdist is not in .cache/numpy; scripts/deps.sh fetches it")
	}
	return matches[0]
}

// SdistFile returns one file of the sdist, by its path under the sdist's
// top directory.
func SdistFile(t testing.TB, sdist, name string) []byte {
	t.Helper()
	f, err := os.Open(sdist)
	require.NoError(t, err)
	defer f.Close()
	gz, err := gzip.NewReader(f)
	require.NoError(t, err)
	r := tar.NewReader(gz)
	for {
		h, err := r.Next()
		require.NoError(t, err, "%s has no %s", sdist, name)
		if _, rest, ok := strings.Cut(h.Name, "/"); ok && rest == name {
			data, err := io.ReadAll(r)
			require.NoError(t, err)
			return data
		}
	}
}
