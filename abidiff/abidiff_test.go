package abidiff

import (
	"strings"
	"testing"

	"github.com/dlgen/dlgen/ir"
	"github.com/dlgen/dlgen/schema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDLPackNeverBrokeItsABI walks every pair of consecutive releases: no
// binary break from v0.6 to v1.3, and exactly the source-level changes that
// history records.
func TestDLPackNeverBrokeItsABI(t *testing.T) {
	s, err := schema.Default()
	require.NoError(t, err)
	var breaks []string
	for i := 1; i < len(s.Releases); i++ {
		old, new := s.Releases[i-1].Version, s.Releases[i].Version
		for _, f := range Compare(s.At(old), s.At(new)) {
			assert.NotEqual(t, ABI, f.Category, "%s -> %s: %s", old, new, f)
			if f.Breaking() {
				breaks = append(breaks, old.String()+"->"+new.String()+" "+f.String())
			}
		}
	}
	assert.Equal(t, []string{
		"0.6->0.7 API FIELD_TYPE_SAME: DLDevice.device_id is int32_t, was int",
		"0.6->0.7 API FIELD_TYPE_SAME: DLTensor.ndim is int32_t, was int",
		"0.8->1.0 API MACRO_NO_DELETE: macro DLPACK_VERSION is no longer defined",
		"0.8->1.0 API MACRO_NO_DELETE: macro DLPACK_ABI_VERSION is no longer defined",
	}, breaks)
}

func TestAdditionsAreReported(t *testing.T) {
	s, err := schema.Default()
	require.NoError(t, err)
	var added []string
	for _, f := range Compare(s.At(ir.Version{Major: 1, Minor: 1}), s.At(ir.Version{Major: 1, Minor: 2})) {
		if f.Rule == "ADDITION" {
			added = append(added, f.Message)
		}
	}
	assert.Contains(t, added, "new DLPackExchangeAPI")
	assert.Contains(t, added, "new kDLTrn = 18")
	assert.Contains(t, added, "new DLPackCurrentWorkStream")
	assert.Contains(t, added, "new typedef DLManagedTensorVersioned for struct DLManagedTensorVersioned")
}

// TestLosingATypedefBreaksSource goes back from v1.2, where
// DLManagedTensorVersioned became a typedef, to v1.1, where code must
// spell it struct DLManagedTensorVersioned.
func TestLosingATypedefBreaksSource(t *testing.T) {
	s, err := schema.Default()
	require.NoError(t, err)
	findings := Compare(s.At(ir.Version{Major: 1, Minor: 2}), s.At(ir.Version{Major: 1, Minor: 1}))
	assert.Contains(t, findings, Finding{Rule: "TYPEDEF_NO_DELETE", Category: API,
		Message: "DLManagedTensorVersioned is no longer a typedef; spell it struct DLManagedTensorVersioned"})
}

// variant loads the default schema with one textual change.
func variant(t *testing.T, old, new string) *ir.API {
	text := string(schema.DefaultBytes())
	require.True(t, strings.Contains(text, old), "the schema has no %q", old)
	s, err := schema.Load("variant.yaml", []byte(strings.Replace(text, old, new, 1)))
	require.NoError(t, err)
	return s.At(s.Newest())
}

func rules(findings []Finding) []string {
	var out []string
	for _, f := range findings {
		if f.Breaking() {
			out = append(out, f.Rule)
		}
	}
	return out
}

func TestBreakingChangesAreCaught(t *testing.T) {
	s, err := schema.Default()
	require.NoError(t, err)
	base := s.At(s.Newest())
	cases := map[string]struct {
		old, new string
		want     []string
	}{
		"renumbered enumerator": {"{name: kDLVulkan, value: 7,", "{name: kDLVulkan, value: 70,", []string{"ENUM_VALUE_NO_DELETE", "ENUM_VALUE_SAME"}},
		"renamed enumerator":    {"{name: kDLOpenCL, value: 4,", "{name: kDLOpenCl, value: 4,", []string{"ENUM_VALUE_NAME_SAME"}},
		"widened field":         {"{name: lanes, type: uint16_t,", "{name: lanes, type: uint32_t,", []string{"STRUCT_SIZE_SAME", "FIELD_OFFSET_SAME", "FIELD_TYPE_SAME"}},
		"moved flag":            {"        bit: 1\n", "        bit: 5\n", []string{"FLAG_BIT_SAME"}},
		"changed signature":     {"{name: device_id, type: int32_t}", "{name: device_id, type: int64_t}", []string{"FUNCTYPE_SAME"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := rules(Compare(base, variant(t, tc.old, tc.new)))
			for _, rule := range tc.want {
				assert.Contains(t, got, rule)
			}
		})
	}
}

func TestEveryRuleIsDocumented(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Rules {
		assert.Regexp(t, `^[A-Z_]+$`, r.ID)
		assert.NotEmpty(t, r.Purpose, r.ID)
		assert.False(t, seen[r.ID], "duplicate rule %s", r.ID)
		seen[r.ID] = true
	}
}
