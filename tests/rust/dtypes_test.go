package rust

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dlgen/dlgen/generated/go/dlpack"
	"github.com/stretchr/testify/assert"
)

// TestDataTypeNamesEqualTheGoPackage: the newest release's crate shows
// every dtype as package dlpack does (DataType.String: a name, lanes, or
// DataType(...)), and reads names as ParseDataType does, refusing the same
// ones in the same words.
func TestDataTypeNamesEqualTheGoPackage(t *testing.T) {
	var shown []dlpack.DataType
	for code := range 24 {
		for _, bits := range []uint8{0, 1, 4, 6, 7, 8, 16, 32, 64, 128} {
			for _, lanes := range []uint16{0, 1, 2, 4, 65535} {
				shown = append(shown, dlpack.DataType{Code: dlpack.DataTypeCode(code), Bits: bits, Lanes: lanes})
			}
		}
	}
	names := []string{"", "f32", "Float32", "float32x", "float32x0", "float32x01", "float32x+4", "float32x65536",
		"float32x 4", "float32 ", "x4", "int8x8x8"}
	for _, n := range dlpack.DataTypeNames() {
		names = append(names, n, n+"x1", n+"x2", n+"x65535", n+"x65536", n+"x", n+"s")
	}
	var input, want []string
	for _, d := range shown {
		input = append(input, fmt.Sprintf("show %d %d %d", d.Code, d.Bits, d.Lanes))
		want = append(want, d.String())
	}
	for _, n := range names {
		input = append(input, "parse "+n)
		if d, err := dlpack.ParseDataType(n); err != nil {
			want = append(want, "err "+err.Error())
		} else {
			want = append(want, fmt.Sprintf("ok %d %d %d", d.Code, d.Bits, d.Lanes))
		}
	}
	got := Importer{}.lines(t, "dtypes", input)
	for i := range input {
		assert.Equal(t, want[i], got[i], input[i])
	}
	refused := strings.Count(strings.Join(want, "\n"), "err ")
	fmt.Printf("Rust and Go agree on %d dtypes shown and %d names read (%d refused)\n", len(shown), len(names), refused)
}
