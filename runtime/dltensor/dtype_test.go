package dltensor_test

import (
	"fmt"
	"testing"

	"github.com/dlgen/dlgen/generated/go/dlpack"
	"github.com/dlgen/dlgen/runtime/dltensor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The dtype names come from the schema: String and ParseDataType of the
// generated package, which dltensor's messages and leak reports show.

func TestDataTypeNamesFromTheSchema(t *testing.T) {
	for name, dt := range map[string]dlpack.DataType{
		"float32":       dltensor.DataTypeOf[float32](),
		"int64":         dltensor.DataTypeOf[int64](),
		"uint8":         dltensor.DataTypeOf[uint8](),
		"complex128":    dltensor.DataTypeOf[complex128](),
		"bool":          dltensor.DataTypeOf[bool](),
		"bfloat16":      {Code: dlpack.DataTypeCodeBfloat, Bits: 16, Lanes: 1},
		"float8_e4m3fn": {Code: dlpack.DataTypeCodeFloat8E4m3fn, Bits: 8, Lanes: 1},
		"float4_e2m1fn": {Code: dlpack.DataTypeCodeFloat4E2m1fn, Bits: 4, Lanes: 1},
		"float32x4":     {Code: dlpack.DataTypeCodeFloat, Bits: 32, Lanes: 4},
		"complex64x2":   {Code: dlpack.DataTypeCodeComplex, Bits: 64, Lanes: 2},
	} {
		assert.Equal(t, name, dt.String())
		back, err := dlpack.ParseDataType(name)
		require.NoError(t, err, name)
		assert.Equal(t, dt, back, name)
	}
	assert.Equal(t, "float32", fmt.Sprint(dltensor.DataTypeOf[float32]()), "what %v shows")
}

func TestDataTypesWithoutANameShowTheirFields(t *testing.T) {
	for want, dt := range map[string]dlpack.DataType{
		"DataType(code=0, bits=4, lanes=1)":   {Code: dlpack.DataTypeCodeInt, Bits: 4, Lanes: 1},
		"DataType(code=99, bits=32, lanes=1)": {Code: 99, Bits: 32, Lanes: 1},
		"DataType(code=2, bits=32, lanes=0)":  {Code: dlpack.DataTypeCodeFloat, Bits: 32, Lanes: 0},
		"DataType(code=3, bits=64, lanes=1)":  {Code: dlpack.DataTypeCodeOpaqueHandle, Bits: 64, Lanes: 1},
	} {
		assert.Equal(t, want, dt.String())
	}
}

func TestParseDataTypeRefusesOtherNames(t *testing.T) {
	for _, name := range []string{"float31", "Float32", "float32x", "float32x0", "float32x04", "float32x65536", "float32x-1",
		"float32x+1", "comple", "x4", "", "kDLFloat"} {
		_, err := dlpack.ParseDataType(name)
		require.ErrorContains(t, err, "unknown dtype name '"+name+"'; known: int8, int16,", name)
	}
	dt, err := dlpack.ParseDataType("float32x65535")
	require.NoError(t, err)
	assert.Equal(t, uint16(65535), dt.Lanes)
}

func TestEveryNameParsesToItself(t *testing.T) {
	names := dlpack.DataTypeNames()
	assert.Len(t, names, 26)
	assert.Equal(t, []string{"int8", "int16", "int32", "int64"}, names[:4])
	for _, name := range names {
		dt, err := dlpack.ParseDataType(name)
		require.NoError(t, err)
		assert.Equal(t, name, dt.String())
		assert.Equal(t, uint16(1), dt.Lanes)
		if fixed := dt.Code.FixedBits(); fixed != 0 {
			assert.Equal(t, fixed, dt.Bits, name)
		}
		assert.True(t, dt.Code.Addressable(), name)
	}
}

// TestRuleMessagesFormatTheirParameters: a message takes its parameters
// in Params order, wherever its text places them.
func TestRuleMessagesFormatTheirParameters(t *testing.T) {
	assert.Equal(t, []string{"code", "name", "bits", "required"}, dlpack.RuleDtypeBits.Params())
	assert.Equal(t, "kDLFloat4_e2m1fn elements have 4 bits, not 8", dlpack.RuleDtypeBits.Format(17, "kDLFloat4_e2m1fn", 8, 4))
	assert.Equal(t, "dtype_bits", dlpack.RuleDtypeBits.String())
	assert.Equal(t, "BufferError", dlpack.RuleDtypeBits.Python())
	assert.Equal(t, "{name} elements have {required} bits, not {bits}", dlpack.RuleDtypeBits.Text())
	assert.Equal(t, "ValueError", dlpack.RuleStridesCount.Python())
}
