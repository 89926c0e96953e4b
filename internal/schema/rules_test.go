package schema

import (
	"testing"

	"github.com/dlgen/dlgen/internal/ir"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRulesResolvePerRelease: what the checks read, release by release.
func TestRulesResolvePerRelease(t *testing.T) {
	s, err := Default()
	require.NoError(t, err)
	for _, r := range s.Releases {
		v := r.Version
		api := s.At(v)
		require.NotNil(t, api.Enum.DeviceType, "%s", v)
		require.NotNil(t, api.Enum.DataTypeCode, "%s", v)
		var host []string
		for _, ev := range api.Enum.DeviceType.Values {
			if ev.HostReadable {
				host = append(host, ev.Name)
			}
		}
		wantHost := []string{"kDLCPU", "kDLCUDAHost", "kDLROCMHost", "kDLCUDAManaged"}
		if v.Main {
			wantHost = append(wantHost, "kDLTPUHost")
		}
		assert.Equal(t, wantHost, host, "%s", v)
		widths := map[string]int{}
		for _, ev := range api.Enum.DataTypeCode.Values {
			if ev.Bits != 0 {
				widths[ev.Name] = ev.Bits
			}
			assert.Equal(t, ev.Name == "kDLOpaqueHandle", ev.Opaque, ev.Name)
		}
		names := map[string]ir.NamedDataType{}
		for _, n := range api.DataTypeNames() {
			names[n.Name] = n
		}
		assert.Equal(t, ir.NamedDataType{Name: "float32", Code: 2, Bits: 32}, names["float32"])
		assert.Equal(t, ir.NamedDataType{Name: "bfloat16", Code: 4, Bits: 16}, names["bfloat16"])
		_, hasBool := names["bool"]
		assert.Equal(t, !v.Less(ir.Version{Minor: 8}), hasBool, "kDLBool is from 0.8")
		if v.Less(ir.Version{Major: 1, Minor: 1}) {
			assert.Empty(t, widths, "%s", v)
			assert.Len(t, names, 14+btoi(hasBool))
		} else {
			assert.Equal(t, 4, widths["kDLFloat4_e2m1fn"])
			assert.Equal(t, 6, widths["kDLFloat6_e3m2fn"])
			assert.Equal(t, 8, widths["kDLFloat8_e4m3fn"])
			assert.Len(t, widths, 11)
			assert.Equal(t, ir.NamedDataType{Name: "float8_e4m3fn", Code: 10, Bits: 8}, names["float8_e4m3fn"])
			assert.Len(t, names, 26+btoi(v.Main), "main adds bcomplex32")
		}

		versioned := api.Versioned()
		assert.Equal(t, versioned, api.Flag.ReadOnly != nil, "%s", v)
		assert.Equal(t, versioned, api.Flag.IsCopied != nil, "%s", v)
		assert.Equal(t, !v.Less(ir.Version{Major: 1, Minor: 1}), api.Flag.SubbytePadded != nil, "%s", v)

		var tensor, dtype *ir.Struct
		for _, st := range api.Structs() {
			switch st.Name {
			case "DLTensor":
				tensor = st
			case "DLDataType":
				dtype = st
			}
		}
		null := map[string]ir.Nullable{}
		for _, f := range tensor.Fields {
			null[f.Name] = f.Nullable
		}
		assert.Equal(t, ir.Nullable{When: ir.NullIfNoElements}, null["data"])
		assert.Equal(t, ir.Nullable{When: ir.NullIfNdimZero}, null["shape"])
		assert.Equal(t, ir.Nullable{When: ir.NullIfNdimZero, Changed: &ir.NullableChange{In: ir.Version{Major: 1, Minor: 2}, From: ir.NullAlways}},
			null["strides"], "every release knows the rule of the tensors it meets, newer or older")
		assert.Equal(t, ir.NullNever, null["byte_offset"].When)
		assert.Same(t, api.Enum.DataTypeCode, dtype.Fields[0].Holds, "holds points into the release")
		assert.Len(t, api.Rules.Messages, len(ir.Checks))
		assert.Equal(t, 64, api.Rules.MaxDims)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestPreviousNamesAndCXXBase: the resolved API keeps what a rename
// replaced, and C++'s base only from its release.
func TestPreviousNamesAndCXXBase(t *testing.T) {
	s, err := Default()
	require.NoError(t, err)
	v12, v13 := s.At(ir.Version{Major: 1, Minor: 2}), s.At(ir.Version{Major: 1, Minor: 3})
	assert.Equal(t, "", v12.Protocol.ExchangeAPIAttribute.Previous)
	assert.Equal(t, "__c_dlpack_exchange_api__", v13.Protocol.ExchangeAPIAttribute.Previous)
	assert.Equal(t, "kDLGPU", v13.Enum.DeviceType.Values[1].Previous)
	assert.Equal(t, "", s.At(ir.Version{Minor: 6}).Enum.DeviceType.CXXBase)
	assert.Equal(t, "int32_t", s.At(ir.Version{Minor: 7}).Enum.DeviceType.CXXBase)
	assert.Equal(t, "uint8_t", v13.Enum.DataTypeCode.Storage)
	assert.Equal(t, "", v13.Enum.DataTypeCode.CXXBase)
}

func TestLoadRejectsBrokenRules(t *testing.T) {
	cases := []struct{ name, old, new, want string }{
		{"host_readable on a type code", "        dtypes: {int8: 8,", "        host_readable: true\n        dtypes: {int8: 8,",
			"host_readable is for enumerators of the enum with role device_type"},
		{"bits on a device type", `{name: kDLCPU, value: 1, since: "0.6", host_readable: true,`, `{name: kDLCPU, value: 1, since: "0.6", host_readable: true, bits: 8,`,
			"bits is for enumerators of the enum with role dtype_code"},
		{"dtype name in capitals", "{float16: 16,", "{Float16: 16,", `dtype name "Float16" is not lower case letters, digits and underscores`},
		{"dtype of another width than its code's", "dtypes: {float4_e2m1fn: 4}", "dtypes: {float4_e2m1fn: 8}",
			"dtype float4_e2m1fn has 8 bits, but kDLFloat4_e2m1fn allows only 4"},
		{"dtype width beyond a byte of bits", "{int8: 8,", "{int8: 256,", "bits of int8 256 is outside [1, 255]"},
		{"duplicate dtype name", "dtypes: {bfloat16: 16}", "dtypes: {float16: 16}", "duplicate dtype name float16"},
		{"dtype name that reads as lanes", "dtypes: {bfloat16: 16}", "dtypes: {float32x2: 16}", "dtype name float32x2 reads as float32 with lanes"},
		{"float format of an unknown kind", "special: fnuz}, doc: \"8-bit float e5m2", "special: nanless}, doc: \"8-bit float e5m2",
			`special "nanless" is none of ieee, fn, fnuz, finite, e8m0`},
		{"float format wider than its code", "float: {exponent: 2, mantissa: 1, bias: 1, special: finite}", "float: {exponent: 3, mantissa: 1, bias: 1, special: finite}",
			"float format of kDLFloat4_e2m1fn is 5 bits wide, but kDLFloat4_e2m1fn allows 4"},
		{"float format without its bias", "float: {exponent: 2, mantissa: 1, bias: 1, special: finite}", "float: {exponent: 2, mantissa: 1, special: finite}",
			"bias"},
		{"float format on a device type", `{name: kDLCPU, value: 1, since: "0.6", host_readable: true,`, `{name: kDLCPU, value: 1, since: "0.6", host_readable: true, float: {exponent: 4, mantissa: 3, bias: 7, special: fn},`,
			"float is for enumerators of the enum with role dtype_code"},
		{"opaque code with a width", "        opaque: true\n", "        opaque: true\n        bits: 64\n", "kDLOpaqueHandle is opaque: its elements have no width and no dtype names"},
		{"holds an undefined name", "holds: DLDataTypeCode,", "holds: DLDataTypeKind,", "DLDataType.code holds undefined DLDataTypeKind"},
		{"holds in another type", "{name: code, type: uint8_t, holds", "{name: code, type: uint16_t, holds",
			"DLDataType.code is uint16_t but holds DLDataTypeCode, kept in uint8_t"},
		{"holds a struct", "holds: DLDataTypeCode,", "holds: DLDevice,", "DLDataType.code holds DLDevice, which is neither an enum nor a flags group"},
		{"holds what is younger", "holds: DLDataTypeCode,", "holds: DLPACK_FLAG_BITMASK,", "DLDataType.code outlives DLPACK_FLAG_BITMASK, which it holds"},
		{"nullable integer", "{name: byte_offset, type: uint64_t,", "{name: byte_offset, type: uint64_t, nullable: always,",
			"only pointer fields are nullable; byte_offset is uint64_t"},
		{"nullable struct", `{name: device, type: DLDevice, since: "0.6",`, `{name: device, type: DLDevice, nullable: always, since: "0.6",`,
			"only pointer fields are nullable; DLTensor.device is DLDevice"},
		{"unknown nullable condition", "        nullable: no_elements\n", "        nullable: sometimes\n",
			`nullable must be one of never, always, ndim_zero, no_elements, not "sometimes"`},
		{"nullable_changed alone", "        nullable: ndim_zero\n        nullable_changed", "        nullable_changed", "nullable_changed needs nullable"},
		{"nullable_changed to an unknown release", `nullable_changed: {in: "1.2", from: always}`, `nullable_changed: {in: "1.4", from: always}`,
			"nullable_changed.in 1.4 must be a listed version within the element's life"},
		{"C++ base of one byte", "cxx_base: {type: int32_t,", "cxx_base: {type: int8_t,", `cxx_base type "int8_t" is not a 4-byte fixed-width integer type`},
		{"enum role played twice", "    storage: uint8_t\n    role: dtype_code\n", "    storage: uint8_t\n    role: device_type\n",
			"enum role device_type is played by both DLDeviceType"},
		{"versioned release without read_only", "        role: read_only\n", "", "release 1.0 has a major_version macro (the versioned protocol) but no flag with role read_only"},
		{"message of no check", "    - {id: ndim_range,", "    - {id: ndim_limit,", "no check is called ndim_limit"},
		{"second message", "    - {id: ndim_range,", "    - {id: shape_null, python: BufferError, text: \"x\"}\n    - {id: ndim_range,",
			"a second message for shape_null"},
		{"missing message", "    - {id: ndim_range, python: BufferError, text: \"ndim {ndim} is outside [0, {max_ndim}]\"}\n", "",
			"no message for check ndim_range (ndim lies in [0, max_ndim])"},
		{"unknown exception", "    - {id: ndim_range, python: BufferError,", "    - {id: ndim_range, python: RuntimeError,",
			`python must be one of BufferError, ValueError, TypeError, not "RuntimeError"`},
		{"placeholder of another check", "text: \"ndim {ndim} is outside [0, {max_ndim}]\"", "text: \"ndim {count} is outside\"",
			"message ndim_range: {count} is not a parameter of the check (ndim, max_ndim)"},
		{"stray brace", "text: \"ndim {ndim} is outside [0, {max_ndim}]\"", "text: \"ndim {ndim} is outside {0, {max_ndim}}\"",
			"message ndim_range: {0, {max_ndim} is not a parameter of the check"},
		{"closing brace alone", "text: \"ndim {ndim} is outside [0, {max_ndim}]\"", "text: \"ndim } {ndim}\"",
			"message ndim_range: a brace that opens no {parameter}"},
		{"max_ndim 0", "  max_ndim: 64\n", "  max_ndim: 0\n", "max_ndim 0 is outside [1, 65536]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load("rules.yaml", edit(t, tc.old, tc.new))
			requirePositioned(t, err, "rules.yaml", tc.want)
		})
	}
}

// TestRulesAreOptional: a schema without rules loads, with no messages
// for backends to emit.
func TestRulesAreOptional(t *testing.T) {
	s, err := Load("base.yaml", []byte(base))
	require.NoError(t, err)
	assert.Empty(t, s.Rules.Messages)
	assert.Zero(t, s.Rules.MaxDims)
}
