package backend

import (
	"testing"

	"github.com/dlgen/dlgen/internal/ir"

	"github.com/stretchr/testify/assert"
)

// TestWrapCountsRunes: width is in characters, so non-ASCII doc text wraps
// where ASCII of the same length does.
func TestWrapCountsRunes(t *testing.T) {
	assert.Equal(t, []string{"ab cd", "ef"}, Wrap("ab cd ef", 5))
	assert.Equal(t, []string{"été ça", "où"}, Wrap("été ça où", 6), "6 runes fit in 6 columns, though they are 8 bytes")
	assert.Equal(t, []string{"µs µs µs µs"}, Wrap("µs µs µs µs", 11))
	assert.Equal(t, []string{"a-very-long-word", "b"}, Wrap("a-very-long-word b", 4), "a word longer than the width stands alone")
}

func TestErrorSaysWhere(t *testing.T) {
	err := Errorf(ir.Pos{File: "s.yaml", Line: 3, Col: 7}, "%s = %d: refused", "kDLX", -1)
	assert.EqualError(t, err, "s.yaml:3:7: kDLX = -1: refused")
}
