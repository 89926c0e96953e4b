//go:build cgo

package abi

import (
	"reflect"
	"testing"

	"github.com/dlgen/dlgen/internal/schema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGoLayoutMatchesC compares unsafe.Sizeof/Alignof/Offsetof of every
// generated Go struct with the C compiler's sizeof/offsetof of the
// generated header, field by field, as cgo reports them.
func TestGoLayoutMatchesC(t *testing.T) {
	s, err := schema.Default()
	require.NoError(t, err)
	api := s.At(s.Newest())
	require.Len(t, Pairs, len(api.Structs()), "every struct of the newest release needs a pair")
	for _, st := range api.Structs() {
		pair, ok := Pairs[st.Name]
		require.True(t, ok, "no cgo pair for %s", st.Name)
		c, g := pair[0], pair[1]
		assert.Equal(t, c.Size(), g.Size(), "size of %s", st.Name)
		assert.Equal(t, c.Align(), g.Align(), "alignment of %s", st.Name)
		require.Equal(t, c.NumField(), len(st.Fields), "cgo fields of %s", st.Name)
		gfs := namedFields(g)
		require.Equal(t, len(gfs), len(st.Fields), "Go fields of %s", st.Name)
		for i := range st.Fields {
			cf, gf := c.Field(i), gfs[i]
			assert.Equal(t, cf.Offset, gf.Offset, "offset of %s.%s (Go %s)", st.Name, st.Fields[i].Name, gf.Name)
			assert.Equal(t, cf.Type.Size(), gf.Type.Size(), "size of %s.%s", st.Name, st.Fields[i].Name)
		}
	}
}

// namedFields drops the blank fields that carry C's padding.
func namedFields(t reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for i := range t.NumField() {
		if f := t.Field(i); f.Name != "_" {
			out = append(out, f)
		}
	}
	return out
}
