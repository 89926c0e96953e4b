package python

import (
	"bytes"
	"flag"
	"path"
	"testing"

	"github.com/dlgen/dlgen/internal/backend"
	"github.com/dlgen/dlgen/internal/backend/backendtest"
	"github.com/dlgen/dlgen/internal/schema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden archives in testdata/")

// TestGolden pins the backend's text, one feature at a time: the archives
// in testdata/ (package backendtest).
func TestGolden(t *testing.T) { backendtest.Golden(t, "python", *update) }

// TestGoldenNamesSourcesOnlyWhereTheyAreCopied: elision replaces exact
// copies, so a source changed on its way into the output would stay in the
// golden file in full, and TestGolden would fail.
func TestGoldenNamesSourcesOnlyWhereTheyAreCopied(t *testing.T) {
	s, err := schema.Default()
	require.NoError(t, err)
	b := Backend{}
	files, err := b.Generate(s.At(s.Newest()))
	require.NoError(t, err)
	found := false
	for _, f := range files {
		if path.Base(f.Path) != "dlpack_cython_tensor.pxi" {
			continue
		}
		found = true
		assert.Equal(t, "# "+backend.Marker+"\n# "+backend.SPDX+"\n[internal/backend/python/runtime/cython_tensor.pxi, verbatim]\n", string(backendtest.Elide(b, f.Content)))
		changed := bytes.Replace(f.Content, []byte("cdef class Tensor"), []byte("cdef class Tensor2"), 1)
		assert.Equal(t, string(changed), string(backendtest.Elide(b, changed)), "a changed copy is not elided")
	}
	assert.True(t, found, "no dlpack_cython_tensor.pxi written")
}
