package cheader

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/dlgen/dlgen/internal/backend/c"
	"github.com/dlgen/dlgen/internal/ir"
	"github.com/dlgen/dlgen/internal/schema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

func defaultSchema(t *testing.T) *ir.Schema {
	t.Helper()
	s, err := schema.Default()
	require.NoError(t, err)
	return s
}

// header is dlgen's C header of release v.
func header(t *testing.T, s *ir.Schema, v ir.Version) string {
	t.Helper()
	files, err := c.Backend{Schema: "schema/dlpack.yaml"}.Generate(s.At(v))
	require.NoError(t, err)
	return string(files[0].Content)
}

func read(t *testing.T, text string) *Header {
	t.Helper()
	h, err := Read("dlpack.h", []byte(text))
	require.NoError(t, err)
	return h
}

// Every header dlgen writes is the release it was written for, with
// nothing to tell: the reader and the comparison agree with the backend.
func TestDlgenHeadersIdentifyAsTheirRelease(t *testing.T) {
	s := defaultSchema(t)
	for _, r := range s.Releases {
		report := Identify(s, read(t, header(t, s, r.Version)))
		assert.Equal(t, r.Version, report.Release)
		assert.Empty(t, report.Findings, "%s", report)
		assert.Equal(t, "dlpack.h: DLPack "+r.Version.Title()+", as dlgen declares it\n", report.String())
	}
}

// Each change to a header is reported as what it is.
func TestIdentifyReportsEveryKindOfDifference(t *testing.T) {
	s := defaultSchema(t)
	v13 := ir.Version{Major: 1, Minor: 3}
	good := header(t, s, v13)
	cases := []struct {
		name, old, new string
		want           []string
	}{
		{"enumerator value", "kDLCUDA = 2,", "kDLCUDA = 5,", []string{"enumerator DLDeviceType.kDLCUDA: 5; v1.3 has it = 2"}},
		{"enumerator missing", "  kDLTrn = 18\n", "", []string{"enumerator DLDeviceType.kDLTrn: missing; v1.3 has it, = 18"}},
		{"enumerator of a later release", "  kDLTrn = 18\n", "  kDLTrn = 18,\n  kDLTPU = 19\n", []string{"enumerator DLDeviceType.kDLTPU: = 19, not in v1.3 (dlgen has it from main)"}},
		{"enumerator unknown", "  kDLTrn = 18\n", "  kDLTrn = 18,\n  kDLQuantum = 99\n", []string{"enumerator DLDeviceType.kDLQuantum: = 99, not in v1.3 (unknown to dlgen)"}},
		{"macro value", "#define DLPACK_MINOR_VERSION 3", "#define DLPACK_MINOR_VERSION 9", []string{"macro DLPACK_MINOR_VERSION: 9; v1.3 defines it as 3"}},
		{"macro missing", "#define DLPACK_DLL\n", "\n", []string{"macro DLPACK_DLL: missing; v1.3 defines it"}},
		{"macro of an older release", "#define DLPACK_MINOR_VERSION 3", "#define DLPACK_MINOR_VERSION 3\n#define DLPACK_ABI_VERSION 1", []string{"macro DLPACK_ABI_VERSION: defined as 1, not in v1.3 (dlgen has it in v0.7 to v0.8)"}},
		{"flag value", "#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)", "#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 3UL)", []string{"macro DLPACK_FLAG_BITMASK_IS_COPIED: 8; v1.3 defines it as 2"}},
		{"const pointee", "  int64_t* shape;", "  const int64_t* shape;", []string{"field DLTensor.shape: type const int64_t*; v1.3 has int64_t*"}},
		{"typedef missing", "} DLPackExchangeAPI;", "};", []string{"typedef DLPackExchangeAPI: missing (only struct DLPackExchangeAPI is declared); v1.3 declares the type name"}},
		{"tag", "typedef struct DLManagedTensor {", "typedef struct DLManagedTensorLegacy {", []string{"struct DLManagedTensor: tag DLManagedTensorLegacy; v1.3 gives it DLManagedTensor"}},
		{"parameter type", "int32_t device_id, void** out_current_stream", "int64_t device_id, void** out_current_stream",
			[]string{"functype DLPackCurrentWorkStream: int (*)(DLDeviceType, int64_t, void**); v1.3 has int (*)(DLDeviceType, int32_t, void**)"}},
		{"functype missing", "typedef int (*DLPackDLTensorFromPyObjectNoSync)(void* py_object, DLTensor* out);", "typedef void* DLPackDLTensorFromPyObjectNoSync;",
			[]string{"functype DLPackDLTensorFromPyObjectNoSync: a typedef of another type; v1.3 declares it a pointer to function"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, 1, strings.Count(good, tc.old), "the edit must match once: %q", tc.old)
			r := Identify(s, read(t, strings.Replace(good, tc.old, tc.new, 1)))
			assert.Equal(t, v13, r.Release, "%s", r)
			var got []string
			for _, f := range r.Findings {
				got = append(got, f.String())
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

// A field that changes width changes the layout on every data model, and
// the report says where.
func TestIdentifyReportsLayouts(t *testing.T) {
	s := defaultSchema(t)
	v13 := ir.Version{Major: 1, Minor: 3}
	r := Identify(s, read(t, strings.Replace(header(t, s, v13), "  uint16_t lanes;", "  uint32_t lanes;", 1)))
	var got []string
	for _, f := range r.Findings {
		got = append(got, f.String())
	}
	for _, want := range []string{
		"field DLDataType.lanes: type uint32_t; v1.3 has uint16_t",
		"struct DLDataType: size 8 on 64-bit; v1.3 has 4",
		"struct DLTensor: size 40 on 32-bit/int64-align-4; v1.3 has 36",
		"field DLTensor.byte_offset: offset 32 on 32-bit/int64-align-4; v1.3 has 28",
		"field DLTensor.shape: offset 24 on 32-bit/int64-align-8; v1.3 has 20",
	} {
		assert.Contains(t, got, want)
	}
	assert.Contains(t, r.String(), "dlpack.h: DLPack v1.3, with ")
}

func TestReadRefusesWhatIsNoDLPackHeader(t *testing.T) {
	cases := map[string]string{
		"def f():\n    pass\n":                "dlpack.h: not a C header dlgen can read: dlpack.h:1:",
		"int x;\n":                            "dlpack.h: no DLPack declarations (it declares no DLTensor)",
		"":                                    "dlpack.h: no DLPack declarations",
		"#include <stdio.h>\n":                "include file not found: <stdio.h>",
		"#error not this one\n":               "not this one",
		"typedef struct DLTensor DLTensor;\n": "dlpack.h: no DLPack declarations",
	}
	for text, want := range cases {
		_, err := Read("dlpack.h", []byte(text))
		assert.ErrorContains(t, err, want, "%q", text)
	}
	_, err := ReadFile("no-such-dir/dlpack.h")
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.ErrorContains(t, err, "no-such-dir/dlpack.h")
}

// The switches of dlgen's own headers are read off: its v1.0 header is
// v1.0 exactly, although C11 code gets the backported typedef.
func TestDlgenBackportsAreReadOff(t *testing.T) {
	s := defaultSchema(t)
	text := header(t, s, ir.Version{Major: 1, Minor: 0})
	require.Contains(t, text, "typedef struct DLManagedTensorVersioned DLManagedTensorVersioned;")
	h := read(t, text)
	require.NotNil(t, h.Struct("DLManagedTensorVersioned"))
	assert.Empty(t, h.Struct("DLManagedTensorVersioned").Typedef)
}

func fragment(t *testing.T, out []byte) map[string]any {
	t.Helper()
	var doc map[string]any
	require.NoError(t, yaml.Unmarshal(out, &doc))
	return doc
}

func TestAdditionsOfAHeaderAheadOfTheSchema(t *testing.T) {
	s := defaultSchema(t)
	text := header(t, s, s.Latest())
	text = strings.Replace(text, "#define DLPACK_MINOR_VERSION 3", "#define DLPACK_MINOR_VERSION 4", 1)
	text = strings.Replace(text, "  kDLAscend = 21\n", "  kDLAscend = 21,\n  kDLQuantum = 22\n", 1)
	text = strings.Replace(text, "#define DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED (1UL << 2UL)",
		"#define DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED (1UL << 2UL)\n#define DLPACK_FLAG_BITMASK_IS_PINNED (1UL << 3UL)", 1)
	text = strings.Replace(text, "  DLTensor dl_tensor;\n} DLManagedTensorVersioned;",
		"  DLTensor dl_tensor;\n  const char* name;\n  void (*on_free)(void* ctx);\n} DLManagedTensorVersioned;", 1)
	text = strings.Replace(text, "#ifdef __cplusplus\n}  /* DLPACK_EXTERN_C */",
		"typedef struct {\n  DLDevice device;\n  int64_t stream;\n} DLPackStream;\ntypedef int (*DLPackSync)(DLPackStream* s, const char*);\n#ifdef __cplusplus\n}  /* DLPACK_EXTERN_C */", 1)
	out, err := Additions(s, read(t, text))
	require.NoError(t, err)
	want := `versions:
  - version: "1.4"
macros:
  - name: DLPACK_MINOR_VERSION
    values:
      - {since: "1.4", value: 4}
declarations:
  - flags: DLPACK_FLAG_BITMASK
    bits:
      - {name: DLPACK_FLAG_BITMASK_IS_PINNED, bit: 3, since: "1.4"}
  - enum: DLDeviceType
    values:
      - {name: kDLQuantum, value: 22, since: "1.4"}
  - struct: DLManagedTensorVersioned
    fields:
      - {name: name, type: const char*, since: "1.4"}
      - name: on_free
        type:
          returns: void
          params:
            - {name: ctx, type: void*}
        since: "1.4"
  - struct: DLPackStream
    since: "1.4"
    fields:
      - {name: device, type: DLDevice, since: "1.4"}
      - {name: stream, type: int64_t, since: "1.4"}
  - functype: DLPackSync
    since: "1.4"
    returns: int
    params:
      - {name: s, type: DLPackStream*}
      - {name: arg1, type: const char*}
`
	assert.Contains(t, string(out), "# What dlpack.h declares beyond the schema's newest release, main, as DLPack 1.4.\n")
	assert.Equal(t, fragment(t, []byte(want)), fragment(t, out), "%s", out)
}

// A header with the newest release's numbers but more in it is upstream's
// main branch: its additions are since main.
func TestAdditionsOfMainBranchHeader(t *testing.T) {
	s := defaultSchema(t)
	text := strings.Replace(header(t, s, s.Latest()), "  kDLAscend = 21\n", "  kDLAscend = 21,\n  kDLQuantum = 22\n", 1)
	out, err := Additions(s, read(t, text))
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"declarations": []any{map[string]any{"enum": "DLDeviceType",
		"values": []any{map[string]any{"name": "kDLQuantum", "value": 22, "since": "main"}}}}}, fragment(t, out))

	out, err = Additions(s, read(t, header(t, s, s.Latest())))
	require.NoError(t, err)
	assert.Contains(t, string(out), "There is nothing to add.\n")
	assert.Empty(t, fragment(t, out))

	_, err = Additions(s, read(t, header(t, s, ir.Version{Major: 1, Minor: 2})))
	assert.EqualError(t, err, "dlpack.h is DLPack 1.2, older than the schema's newest release main")
}
