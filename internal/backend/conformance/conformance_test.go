package conformance

import (
	"strings"
	"testing"

	"github.com/dlgen/dlgen"
	"github.com/dlgen/dlgen/internal/backend"
	"github.com/dlgen/dlgen/internal/schema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The kit's directory is a Python project whose every file carries the
// marker, pyproject.toml included, with dlgen's version.
func TestTheKitIsAMarkedPythonProject(t *testing.T) {
	s, err := schema.Default()
	require.NoError(t, err)
	api := s.At(s.Newest())
	files, err := Backend{}.Generate(api)
	require.NoError(t, err)
	byPath := map[string]string{}
	for _, f := range files {
		byPath[f.Path] = string(f.Content)
		first, _, _ := strings.Cut(string(f.Content), "\n")
		assert.True(t, strings.HasSuffix(first, backend.Marker) || strings.HasSuffix(first, backend.Marker+" -->"),
			"%s starts with the marker: %q", f.Path, first)
	}
	pyproject := byPath[Dir+"/pyproject.toml"]
	require.NotEmpty(t, pyproject)
	for _, line := range []string{
		`name = "dlpack-conformance"`,
		`version = "` + dlgen.Version + `"`,
		`readme = "README.md"`,
		`license = "Apache-2.0"`,
		`dlpack-conformance = "dlpack_conformance.__main__:command"`,
		`dlpack-sanitize = "dlpack_conformance.sanitize:command"`,
		`dlpack_conformance = "dlpack_conformance.pytest_plugin"`,
		`packages = ["dlpack_conformance"]`,
	} {
		assert.Contains(t, strings.Split(pyproject, "\n"), line)
	}
	assert.Contains(t, byPath, Dir+"/"+Package+"/pytest_plugin.py")
	assert.Contains(t, pyproject, "v"+api.Version().String()+" conformance kit")
}
