package golang

import (
	"go/format"
	"go/parser"
	"go/token"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/dlgen/dlgen/internal/backend"
	"github.com/dlgen/dlgen/internal/schema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryReleaseIsOnePackageOfFormattedGo: for every release of the
// embedded schema the backend writes package dlpack under Dir, each file
// gofmt's layout, the marker first, one layout guard per C data model and
// the file that breaks the build elsewhere; release.go exactly where the
// release has the enums a runtime reads.
func TestEveryReleaseIsOnePackageOfFormattedGo(t *testing.T) {
	s, err := schema.Default()
	require.NoError(t, err)
	for _, r := range s.Releases {
		api := s.At(r.Version)
		files, err := Backend{Schema: "dlpack.yaml"}.Generate(api)
		require.NoError(t, err, "%s", r.Version)
		var names []string
		for _, f := range files {
			names = append(names, path.Base(f.Path))
			assert.Equal(t, Dir, path.Dir(f.Path), "%s: %s", r.Version, f.Path)
			assert.True(t, strings.HasPrefix(string(f.Content), "// "+backend.Marker+"\n"), "%s: %s does not open with the marker", r.Version, f.Path)
			formatted, err := format.Source(f.Content)
			require.NoError(t, err, "%s: %s", r.Version, f.Path)
			assert.Equal(t, string(formatted), string(f.Content), "%s: %s is not gofmt's", r.Version, f.Path)
			file, err := parser.ParseFile(token.NewFileSet(), f.Path, f.Content, parser.PackageClauseOnly)
			require.NoError(t, err)
			assert.Equal(t, Package, file.Name.Name, "%s: %s", r.Version, f.Path)
		}
		for _, want := range []string{"dlpack.go", "rules.go", "layout_64bit.go", "layout_386.go", "layout_32bit_align8.go", "layout_unknown.go"} {
			assert.Contains(t, names, want, "%s", r.Version)
		}
		hasEnums := api.Enum.DataTypeCode != nil && api.Enum.DeviceType != nil
		assert.Equal(t, hasEnums, slices.Contains(names, "release.go"), "%s: release.go", r.Version)
	}
}

// TestNamer: what Go name each kind of C name gets.
func TestNamer(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{typeName("DLTensor"), "Tensor"},
		{typeName("DLPackVersion"), "Version"},
		{typeName("DLManagedTensorVersioned"), "ManagedTensorVersioned"},
		{enumeratorName("DLDataTypeCode", "kDLFloat8_e4m3fn"), "DataTypeCodeFloat8E4m3fn"},
		{enumeratorName("DLDeviceType", "kDLCPU"), "DeviceTypeCPU"},
		{macroName("DLPACK_MAJOR_VERSION"), "MajorVersion"},
		{flagsTypeName("DLPACK_FLAG_BITMASK"), "FlagBitmask"},
		{fieldName("device_id"), "DeviceID"},
		{fieldName("dl_tensor"), "DLTensor"},
		{fieldName("byte_offset"), "ByteOffset"},
	} {
		assert.Equal(t, c.want, c.got)
	}
}
