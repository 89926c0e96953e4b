package abidiff

import (
	"strings"
	"testing"

	"github.com/dlgen/dlgen/internal/ir"
	"github.com/dlgen/dlgen/internal/schema"
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
		"1.1->1.2 RULE FIELD_NULLABLE_SAME: DLTensor.strides may be NULL only when ndim is 0, was in any tensor: producers must set it where they left it NULL",
	}, breaks)
}

// A nullable rule that changes is reported for the side it affects: a
// stricter one for producers, a looser one for consumers.
func TestNullabilityChangesAreRuleChanges(t *testing.T) {
	v11, v12 := ir.Version{Major: 1, Minor: 1}, ir.Version{Major: 1, Minor: 2}
	assert.Contains(t, between(t, v12, v11),
		"RULE FIELD_NULLABLE_SAME: DLTensor.strides may be NULL in any tensor, was only when ndim is 0: consumers must accept NULL where it was refused")
	for _, f := range between(t, ir.Version{Major: 1, Minor: 2}, ir.Version{Major: 1, Minor: 3}) {
		assert.NotContains(t, f, "FIELD_NULLABLE_SAME")
	}
}

// strs spells findings as dlgen -diff prints them.
func strs(findings []Finding) []string {
	out := []string{}
	for _, f := range findings {
		out = append(out, f.String())
	}
	return out
}

// between spells the findings from release old to release new of the
// default schema.
func between(t *testing.T, old, new ir.Version) []string {
	s, err := schema.Default()
	require.NoError(t, err)
	return strs(Compare(s.At(old), s.At(new)))
}

func TestAdditionsAreReported(t *testing.T) {
	assert.Equal(t, []string{
		"RULE FIELD_NULLABLE_SAME: DLTensor.strides may be NULL only when ndim is 0, was in any tensor: producers must set it where they left it NULL",
		"INFO ADDITION: new DLPackManagedTensorAllocator",
		"INFO ADDITION: new DLPackManagedTensorFromPyObjectNoSync",
		"INFO ADDITION: new DLPackDLTensorFromPyObjectNoSync",
		"INFO ADDITION: new DLPackCurrentWorkStream",
		"INFO ADDITION: new DLPackManagedTensorToPyObjectNoSync",
		"INFO ADDITION: new DLPackExchangeAPIHeader",
		"INFO ADDITION: new DLPackExchangeAPI",
		"INFO ADDITION: new typedef DLManagedTensorVersioned for struct DLManagedTensorVersioned",
		"INFO ADDITION: new kDLTrn = 18",
		"INFO MACRO_VALUE: DLPACK_MINOR_VERSION is 2, was 1",
	}, between(t, ir.Version{Major: 1, Minor: 1}, ir.Version{Major: 1, Minor: 2}))
}

// TestGoingBackReportsEachLossOnce goes back from v1.2 to v1.1: every
// declaration v1.2 added is lost, each reported once, by the rule about
// its kind, and DLManagedTensorVersioned is no longer a typedef.
func TestGoingBackReportsEachLossOnce(t *testing.T) {
	assert.Equal(t, []string{
		"ABI STRUCT_NO_DELETE: struct DLPackExchangeAPIHeader is gone",
		"ABI STRUCT_NO_DELETE: struct DLPackExchangeAPI is gone",
		"API TYPEDEF_NO_DELETE: DLManagedTensorVersioned is no longer a typedef; spell it struct DLManagedTensorVersioned",
		"ABI ENUM_VALUE_NO_DELETE: DLDeviceType value 18 (kDLTrn) is gone",
		"API FUNCTYPE_NO_DELETE: function-pointer type DLPackCurrentWorkStream is gone",
		"API FUNCTYPE_NO_DELETE: function-pointer type DLPackDLTensorFromPyObjectNoSync is gone",
		"API FUNCTYPE_NO_DELETE: function-pointer type DLPackManagedTensorAllocator is gone",
		"API FUNCTYPE_NO_DELETE: function-pointer type DLPackManagedTensorFromPyObjectNoSync is gone",
		"API FUNCTYPE_NO_DELETE: function-pointer type DLPackManagedTensorToPyObjectNoSync is gone",
		"RULE FIELD_NULLABLE_SAME: DLTensor.strides may be NULL in any tensor, was only when ndim is 0: consumers must accept NULL where it was refused",
		"INFO MACRO_VALUE: DLPACK_MINOR_VERSION is 1, was 2",
	}, between(t, ir.Version{Major: 1, Minor: 2}, ir.Version{Major: 1, Minor: 1}))
}

// variant loads the default schema with one textual change.
func variant(t *testing.T, old, new string) *ir.API {
	text := string(schema.DefaultBytes())
	require.True(t, strings.Contains(text, old), "the schema has no %q", old)
	s, err := schema.Load("variant.yaml", []byte(strings.Replace(text, old, new, 1)))
	require.NoError(t, err)
	return s.At(s.Newest())
}

// TestEachChangeIsReportedOnce pins every finding of one change to the
// newest release: the change itself once, under the rule about it, and
// each element it moves once for all data models.
func TestEachChangeIsReportedOnce(t *testing.T) {
	s, err := schema.Default()
	require.NoError(t, err)
	base := s.At(s.Newest())
	until := `until: "` + s.Newest().String() + `"`
	text := string(schema.DefaultBytes())
	// The enum goes, and so does what the field holding it says.
	holds := "holds: DLDataTypeCode, "
	codesEnd := strings.Index(text, holds) + len(holds)
	codes := text[strings.Index(text, "  - enum: DLDataTypeCode\n"):codesEnd]
	noCodes := strings.TrimSuffix(text[strings.Index(text, "  - struct: DLDataType\n"):codesEnd], holds)
	cases := map[string]struct {
		old, new string
		want     []string
	}{
		"renumbered enumerator": {"{name: kDLVulkan, value: 7,", "{name: kDLVulkan, value: 70,", []string{
			"ABI ENUM_VALUE_SAME: kDLVulkan is 70, was 7"}},
		"renamed enumerator": {"{name: kDLOpenCL, value: 4,", "{name: kDLOpenCl, value: 4,", []string{
			"API ENUM_VALUE_NAME_SAME: DLDeviceType value 4 is named kDLOpenCl, was kDLOpenCL"}},
		"deleted enumerator": {"{name: kDLVulkan, value: 7, ", "{name: kDLVulkan, value: 7, " + until + ", ", []string{
			"ABI ENUM_VALUE_NO_DELETE: DLDeviceType value 7 (kDLVulkan) is gone"}},
		"deleted enum": {codes, noCodes, []string{
			"ABI ENUM_NO_DELETE: enum DLDataTypeCode is gone"}},
		"retyped field of the same size": {"{name: major, type: uint32_t,", "{name: major, type: int32_t,", []string{
			"API FIELD_TYPE_SAME: DLPackVersion.major is int32_t, was uint32_t"}},
		"widened field": {"{name: lanes, type: uint16_t,", "{name: lanes, type: uint32_t,", []string{
			"ABI STRUCT_SIZE_SAME: DLDataType is 8 bytes, was 4 bytes, on every data model",
			"ABI STRUCT_SIZE_SAME: DLTensor is 56 bytes, was 48 bytes, on 64-bit; 40 bytes, was 36 bytes, on 32-bit/int64-align-4",
			"ABI STRUCT_SIZE_SAME: DLManagedTensor is 72 bytes, was 64 bytes, on 64-bit; 48 bytes, was 44 bytes, on 32-bit/int64-align-4",
			"ABI STRUCT_SIZE_SAME: DLManagedTensorVersioned is 88 bytes, was 80 bytes, on 64-bit; 64 bytes, was 60 bytes, on 32-bit/int64-align-4",
			"ABI FIELD_OFFSET_SAME: DLDataType.lanes, now uint32_t (was uint16_t), is at 4 (4 bytes), was at 2 (2 bytes), on every data model",
			"ABI FIELD_OFFSET_SAME: DLTensor.dtype is at 20 (8 bytes), was at 20 (4 bytes), on 64-bit; at 16 (8 bytes), was at 16 (4 bytes), on 32-bit/int64-align-4 and 32-bit/int64-align-8",
			"ABI FIELD_OFFSET_SAME: DLTensor.shape is at 32 (8 bytes), was at 24 (8 bytes), on 64-bit; at 24 (4 bytes), was at 20 (4 bytes), on 32-bit/int64-align-4 and 32-bit/int64-align-8",
			"ABI FIELD_OFFSET_SAME: DLTensor.strides is at 40 (8 bytes), was at 32 (8 bytes), on 64-bit; at 28 (4 bytes), was at 24 (4 bytes), on 32-bit/int64-align-4 and 32-bit/int64-align-8",
			"ABI FIELD_OFFSET_SAME: DLTensor.byte_offset is at 48 (8 bytes), was at 40 (8 bytes), on 64-bit; at 32 (8 bytes), was at 28 (8 bytes), on 32-bit/int64-align-4",
			"ABI FIELD_OFFSET_SAME: DLManagedTensor.dl_tensor is at 0 (56 bytes), was at 0 (48 bytes), on 64-bit; at 0 (40 bytes), was at 0 (36 bytes), on 32-bit/int64-align-4",
			"ABI FIELD_OFFSET_SAME: DLManagedTensor.manager_ctx is at 56 (8 bytes), was at 48 (8 bytes), on 64-bit; at 40 (4 bytes), was at 36 (4 bytes), on 32-bit/int64-align-4",
			"ABI FIELD_OFFSET_SAME: DLManagedTensor.deleter is at 64 (8 bytes), was at 56 (8 bytes), on 64-bit; at 44 (4 bytes), was at 40 (4 bytes), on 32-bit/int64-align-4",
			"ABI FIELD_OFFSET_SAME: DLManagedTensorVersioned.dl_tensor is at 32 (56 bytes), was at 32 (48 bytes), on 64-bit; at 24 (40 bytes), was at 24 (36 bytes), on 32-bit/int64-align-4",
		}},
		"moved flag": {"        bit: 1\n", "        bit: 5\n", []string{
			"ABI FLAG_BIT_SAME: flag DLPACK_FLAG_BITMASK_IS_COPIED is bit 5, was 1"}},
		"deleted flag": {"        bit: 2\n", "        bit: 2\n        " + until + "\n", []string{
			"ABI FLAG_NO_DELETE: flag DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED is gone"}},
		"changed signature": {"{name: device_id, type: int32_t}", "{name: device_id, type: int64_t}", []string{
			"ABI FUNCTYPE_SAME: DLPackCurrentWorkStream is int (*)(DLDeviceType device_type, int64_t device_id, void** out_current_stream), " +
				"was int (*)(DLDeviceType device_type, int32_t device_id, void** out_current_stream)"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, strs(Compare(base, variant(t, tc.old, tc.new))))
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
