package schema

import (
	"regexp"
	"strings"
	"testing"

	"github.com/dlgen/dlgen/internal/ir"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDefaultSchemaLoads(t *testing.T) {
	s, err := Default()
	require.NoError(t, err)
	var versions []string
	for _, r := range s.Releases {
		versions = append(versions, r.Version.String())
	}
	assert.Equal(t, []string{"0.6", "0.7", "0.8", "1.0", "1.1", "1.2", "1.3", "main"}, versions)
}

// base is a small valid schema; each case below breaks one thing in it.
const base = `name: dlpack
header_guard: G_H_
versions:
  - version: "0.6"
  - version: "1.0"
macros:
  - name: DLPACK_VERSION
    since: "0.6"
    values:
      - {since: "0.6", value: 60}
declarations:
  - enum: DLDeviceType
    since: "0.6"
    storage: int32_t
    values:
      - {name: kDLCPU, value: 1, since: "0.6"}
      - {name: kDLCUDA, value: 2, since: "1.0"}
  - struct: DLDevice
    since: "0.6"
    fields:
      - {name: device_type, type: DLDeviceType, since: "0.6"}
      - {name: device_id, type: int32_t, since: "0.6"}
python:
  - {name: dltensor, role: capsule, since: "0.6"}
  - {name: used_dltensor, role: used_capsule, since: "0.6"}
`

// versioned is a small valid schema with every role, a retyped field, a
// renamed enumerator, flags and a function type.
const versioned = `name: dlpack
header_guard: G_H_
versions:
  - version: "0.8"
  - version: "1.0"
macros:
  - {name: DLPACK_EXTERN_C, since: "0.8", kind: extern_c}
  - {name: DLPACK_VERSION, role: version, since: "0.8", until: "1.0", values: [{since: "0.8", value: 80}]}
  - {name: DLPACK_MAJOR_VERSION, role: major_version, since: "1.0", values: [{since: "1.0", value: 1}]}
  - {name: DLPACK_MINOR_VERSION, role: minor_version, since: "1.0", values: [{since: "1.0", value: 0}]}
declarations:
  - enum: DLDeviceType
    since: "0.8"
    storage: int32_t
    values:
      - {name: kDLCUDA, value: 2, since: "0.8", renamed: {in: "0.5", from: kDLGPU}}
  - struct: DLTensor
    tag: DLTensor
    since: "0.8"
    fields:
      - {name: data, type: void*, since: "0.8"}
      - {name: device, type: DLDeviceType, since: "0.8"}
      - {name: ndim, type: int32_t, since: "0.8", retyped: {in: "1.0", from: int}}
  - functype: Deleter
    since: "1.0"
    returns: void
    params: [{name: self, type: struct DLTensor*}]
  - flags: Flags
    since: "1.0"
    type: uint64_t
    bits:
      - {name: FLAG_READ_ONLY, bit: 0, since: "1.0", role: read_only}
      - {name: FLAG_IS_COPIED, bit: 1, since: "1.0", role: is_copied}
python:
  - {name: dltensor, role: capsule, since: "0.8"}
  - {name: used_dltensor, role: used_capsule, since: "0.8"}
  - {name: dltensor_versioned, role: versioned_capsule, since: "1.0"}
  - {name: used_dltensor_versioned, role: used_versioned_capsule, since: "1.0"}
  - {name: __dlpack_c_exchange_api__, role: exchange_api_attribute, since: "1.0"}
  - {name: dlpack_exchange_api, role: exchange_api_capsule, since: "1.0"}
`

func TestBaseSchemaIsValid(t *testing.T) {
	s, err := Load("base.yaml", []byte(base))
	require.NoError(t, err)
	api := s.At(ir.Version{Major: 0, Minor: 6})
	require.Len(t, api.Enums(), 1)
	assert.Len(t, api.Enums()[0].Values, 1, "kDLCUDA only exists from 1.0")
	_, err = Load("versioned.yaml", []byte(versioned))
	require.NoError(t, err)
}

func TestLoadRejects(t *testing.T) {
	cases := []struct {
		name, old, new, want string
	}{
		{"unknown top-level key", "header_guard: G_H_\n", "header_guard: G_H_\ncolour: blue\n", `base.yaml:3:1: unknown key "colour" in the schema`},
		{"unknown nested key", "{name: kDLCPU, value: 1, since: \"0.6\"}", "{name: kDLCPU, value: 1, since: \"0.6\", colour: red}", `base.yaml:16:48: unknown key "colour" in an enumerator`},
		{"missing required key", "    storage: int32_t\n", "", `base.yaml:12:5: an enum is missing required key "storage"`},
		{"duplicate name", "struct: DLDevice", "struct: DLDeviceType", "base.yaml:18:5: duplicate name DLDeviceType (first declared at base.yaml:12:5)"},
		{"duplicate enumerator value", "{name: kDLCUDA, value: 2,", "{name: kDLCUDA, value: 1,", "base.yaml:17:32: value 1 of kDLCUDA duplicates kDLCPU"},
		{"value does not fit", "{name: kDLCUDA, value: 2,", "{name: kDLCUDA, value: 2147483648,", "value 2147483648 of kDLCUDA does not fit the storage type int32_t"},
		{"undefined type", "type: DLDeviceType,", "type: DLDeviceKind,", "base.yaml:21:35: DLDevice.device_type uses undefined type DLDeviceKind"},
		{"malformed version", `- {name: kDLCPU, value: 1, since: "0.6"}`, `- {name: kDLCPU, value: 1, since: "zero"}`, `since: version "zero" is not of the form MAJOR.MINOR`},
		{"version out of range", `- {name: kDLCPU, value: 1, since: "0.6"}`, `- {name: kDLCPU, value: 1, since: "2.0"}`, "base.yaml:16:41: since 2.0 is not one of the schema's versions (0.6 to 1.0)"},
		{"member older than parent", "  - struct: DLDevice\n    since: \"0.6\"", "  - struct: DLDevice\n    since: \"1.0\"", "field device_type is since 0.6 but what contains it only exists since 1.0"},
		{"type used before it exists", "{name: device_id, type: int32_t, since: \"0.6\"}", "{name: device_id, type: int32_t, since: \"0.6\"}\n      - {name: pad, type: DLDevice, since: \"0.6\"}", "DLDevice.pad uses DLDevice before it is declared"},
		{"until before since", "    since: \"0.6\"\n    values:\n      - {since: \"0.6\", value: 60}", "    since: \"0.6\"\n    until: \"0.6\"\n    values:\n      - {since: \"0.6\", value: 60}", "until 0.6 must be later than since 0.6"},
		{"bad C type", "type: int32_t, since", "type: \"int32_t)\", since", "cannot parse C type"},
		{"yaml syntax", "versions:\n", "versions: [\n", "base.yaml:"},
		{"keyword as a name", "{name: kDLCPU, value: 1,", "{name: class, value: 1,", `base.yaml:16:16: enumerator name "class" is a keyword in C++ and a keyword in Python; a schema name must be free in every language dlgen writes`},
		{"renamed from a keyword", "{name: kDLCUDA, value: 2, since: \"1.0\"}", "{name: kDLCUDA, value: 2, since: \"0.6\", renamed: {in: \"1.0\", from: int}}", `renamed.from "int" is a keyword`},
		{"renamed from a name in use", "{name: kDLCUDA, value: 2, since: \"1.0\"}", "{name: kDLCUDA, value: 2, since: \"0.6\", renamed: {in: \"1.0\", from: kDLCPU}}", "base.yaml:17:9: renamed.from kDLCPU is, in release 0.6, also the name at base.yaml:16:9"},
		{"alias", "header_guard: G_H_", "header_guard: &g G_H_\nname2: *g", `unknown key "name2"`},
		{"second document", "header_guard: G_H_\n", "header_guard: G_H_\n---\nname: other\n", "base.yaml:3:1: the schema must be one YAML document; a second one starts here"},
		{"syntax error in a second document", "header_guard: G_H_\n", "header_guard: G_H_\n---\n[\n", "base.yaml:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(base, tc.old, tc.new, 1)
			require.NotEqual(t, base, src, "the case must change the schema")
			_, err := Load("base.yaml", []byte(src))
			requirePositioned(t, err, "base.yaml", tc.want)
		})
	}
}

// requirePositioned asserts that err is an ErrorList containing want whose
// every error starts with file:line:col.
func requirePositioned(t *testing.T, err error, file, want string) {
	t.Helper()
	require.ErrorContains(t, err, want)
	var list ErrorList
	require.ErrorAs(t, err, &list)
	for _, e := range list {
		assert.Regexp(t, `^`+regexp.QuoteMeta(file)+`:\d+:\d+: `, e.Error())
	}
}

func TestLoadAcceptsAnOldNameFreedByTheRename(t *testing.T) {
	// kDLCUDA was spelled kDLGPU, and kDLGPU names nothing else: fine.
	src := strings.Replace(base, "{name: kDLCUDA, value: 2, since: \"1.0\"}", "{name: kDLCUDA, value: 2, since: \"0.6\", renamed: {in: \"1.0\", from: kDLGPU}}", 1)
	s, err := Load("base.yaml", []byte(src))
	require.NoError(t, err)
	assert.Equal(t, "kDLGPU", s.At(ir.Version{Major: 0, Minor: 6}).Enums()[0].Values[1].Name)
}

func TestLoadRejectsEmptyFileAtLineOne(t *testing.T) {
	for _, src := range []string{"", "# only a comment\n"} {
		_, err := Load("empty.yaml", []byte(src))
		requirePositioned(t, err, "empty.yaml", "empty.yaml:1:1: the schema is empty: it must be one YAML document (name, header_guard, versions, declarations)")
	}
}

func TestLoadReportsEveryError(t *testing.T) {
	src := strings.Replace(base, "header_guard: G_H_\n", "header_guard: G_H_\nx: 1\ny: 2\n", 1)
	_, err := Load("base.yaml", []byte(src))
	var list ErrorList
	require.ErrorAs(t, err, &list)
	assert.Len(t, list, 2)
}

// FuzzLoad runs the loader on arbitrary input: every error must carry a
// position, nothing may panic, and a schema that loads must resolve every
// release with layouts. Seeds are small so that each input runs fast and
// minimisation stays short; testdata/fuzz/FuzzLoad keeps the crashers
// found so far as regression seeds.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(base))
	f.Add([]byte(versioned))
	f.Add([]byte("versions: [{version: '1.0'}]\ndeclarations: [{struct: A, since: '1.0', fields: [{name: a, type: 'struct A*', since: '1.0'}]}]"))
	f.Add([]byte("- [a, b]\n- {c: d}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Load("fuzz.yaml", data)
		if err != nil {
			for _, e := range err.(ErrorList) {
				if e.Pos.File != "fuzz.yaml" || e.Pos.Line < 1 || e.Pos.Col < 1 {
					t.Fatalf("error without position: %v", e)
				}
			}
			return
		}
		for _, r := range s.Releases {
			for _, st := range s.At(r.Version).Structs() {
				for _, abi := range ir.ABIs {
					abi.Layout(st)
				}
			}
		}
	})
}

// TestMisspelledSinceOfAMacroIsTwoErrorsOnly: a macro whose since is
// misspelled gets the missing key and the unknown one, and nothing about
// its values, which have no since to be checked against.
func TestMisspelledSinceOfAMacroIsTwoErrorsOnly(t *testing.T) {
	old := "    since: \"0.6\"\n    values:\n      - {since: \"0.6\", value: 60}"
	require.Contains(t, base, old)
	_, err := Load("base.yaml", []byte(strings.Replace(base, old, "    sinse: \"0.6\"\n    values:\n      - {since: \"0.6\", value: 60}", 1)))
	var list ErrorList
	require.ErrorAs(t, err, &list)
	var got []string
	for _, e := range list {
		got = append(got, e.Msg)
	}
	assert.Equal(t, []string{`a macro is missing required key "since"`, `unknown key "sinse" in a macro (allowed: doc, kind, name, role, since, until, values)`}, got)
}
