package schema

import (
	"strings"
	"testing"

	"github.com/dlgen/dlgen/internal/ir"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A struct whose typedef arrives after the struct itself (as
// DLManagedTensorVersioned's did in v1.2).
const lateTypedef = `  - struct: DLDevice
    since: "0.6"
    tag: DLDevice
    typedef_since: "1.0"
`

func TestTypedefSinceSetsWhenTheTypedefExists(t *testing.T) {
	src := strings.Replace(base, "  - struct: DLDevice\n    since: \"0.6\"\n", lateTypedef, 1)
	s, err := Load("base.yaml", []byte(src))
	require.NoError(t, err)
	d := s.At(ir.Version{Major: 0, Minor: 6}).Structs()[0]
	assert.Equal(t, "struct DLDevice", d.CType(ir.Version{Major: 0, Minor: 6}))
	assert.Equal(t, "DLDevice", d.CType(ir.Version{Major: 1, Minor: 0}))
}

func TestTypedefSinceRejects(t *testing.T) {
	holder := "  - struct: DLHolder\n    since: \"0.6\"\n    fields:\n      - {name: d, type: %s, since: \"0.6\"}\n"
	cases := []struct{ name, decl, extra, want string }{
		{"without a tag", strings.Replace(lateTypedef, "    tag: DLDevice\n", "", 1), "",
			"base.yaml:20:20: typedef_since 1.0 needs a struct tag"},
		{"before the struct", "  - struct: DLDevice\n    since: \"1.0\"\n    tag: DLDevice\n    typedef_since: \"0.6\"\n", "",
			"typedef_since 0.6 needs a struct tag and a release from since 1.0 on"},
		{"typedef used too early", lateTypedef, strings.Replace(holder, "%s", "DLDevice", 1),
			"DLHolder.d exists since 0.6 but uses the typedef DLDevice, which only exists since 1.0; spell it struct DLDevice"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := withStruct(strings.Replace(base, "  - struct: DLDevice\n    since: \"0.6\"\n", tc.decl, 1), tc.extra)
			_, err := Load("base.yaml", []byte(src))
			require.ErrorContains(t, err, tc.want)
		})
	}
	// Spelled with its tag, the struct may be used before its typedef.
	src := withStruct(strings.Replace(base, "  - struct: DLDevice\n    since: \"0.6\"\n", lateTypedef, 1), strings.Replace(holder, "%s", `"struct DLDevice"`, 1))
	_, err := Load("base.yaml", []byte(src))
	require.NoError(t, err)
}

// withStruct adds a declaration at the end of the declarations of src.
func withStruct(src, decl string) string {
	return strings.Replace(src, "python:\n", decl+"python:\n", 1)
}

// A typedef that arrives after every listed release leaves the struct
// declared by its tag in all of them; a release between listed ones is
// still an error.
func TestTypedefSinceAfterTheListedReleases(t *testing.T) {
	later := strings.Replace(lateTypedef, `typedef_since: "1.0"`, `typedef_since: "1.1"`, 1)
	s, err := Load("base.yaml", []byte(strings.Replace(base, "  - struct: DLDevice\n    since: \"0.6\"\n", later, 1)))
	require.NoError(t, err)
	for _, r := range s.Releases {
		assert.Equal(t, "struct DLDevice", s.At(r.Version).Structs()[0].CType(r.Version), "%s", r.Version)
	}
	between := strings.Replace(lateTypedef, `typedef_since: "1.0"`, `typedef_since: "0.8"`, 1)
	_, err = Load("base.yaml", []byte(strings.Replace(base, "  - struct: DLDevice\n    since: \"0.6\"\n", between, 1)))
	requirePositioned(t, err, "base.yaml", "typedef_since 0.8 is not one of the schema's versions")
}
