package ir

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseVersion(t *testing.T) {
	v, err := ParseVersion("1.3")
	require.NoError(t, err)
	assert.Equal(t, Version{Major: 1, Minor: 3}, v)
	v, err = ParseVersion("0.10")
	require.NoError(t, err)
	assert.Equal(t, Version{Major: 0, Minor: 10}, v)
	assert.True(t, Version{Major: 0, Minor: 8}.Less(Version{Major: 1, Minor: 0}))
	assert.True(t, Version{Major: 1, Minor: 2}.Less(Version{Major: 1, Minor: 10}))
	for _, bad := range []string{"1", "1.", ".3", "1.3.0", "a.b", "-1.0", "", "+1.3", "1.+3", "1.03", "01.3", "00.6", "1.3 ", "main"} {
		_, err := ParseVersion(bad)
		assert.EqualError(t, err, fmt.Sprintf("version %q is not of the form MAJOR.MINOR (decimal numbers without leading zeros)", bad))
	}
	_, err = ParseVersion("1.65536")
	assert.EqualError(t, err, `version "1.65536" is out of range`)
}

// The main branch sorts after the release whose numbers it carries and
// before any later one, and is named apart from it.
func TestMainBranchOrdersAfterItsRelease(t *testing.T) {
	v13, main, v14 := Version{Major: 1, Minor: 3}, Version{Major: 1, Minor: 3, Main: true}, Version{Major: 1, Minor: 4}
	assert.True(t, v13.Less(main))
	assert.False(t, main.Less(v13))
	assert.False(t, main.Less(main))
	assert.True(t, main.Less(v14))
	assert.Equal(t, "main", main.String())
	assert.Equal(t, "main (unreleased, after v1.3)", main.Title())
	assert.Equal(t, "v1.3", v13.Title())
	assert.True(t, Life{Since: v13}.In(main), "main has what 1.3 has")
	assert.False(t, Life{Since: main}.In(v13))
}

func TestParseReleaseNamesTheKnown(t *testing.T) {
	s := &Schema{Releases: []Release{{Version: Version{Major: 1, Minor: 2}}, {Version: Version{Major: 1, Minor: 3}}}}
	_, err := s.ParseRelease("main")
	assert.EqualError(t, err, "this schema has no main release (known: 1.2, 1.3)")
	assert.Equal(t, Version{Major: 1, Minor: 3}, s.Newest())
	s.Releases = append(s.Releases, Release{Version: Version{Major: 1, Minor: 3, Main: true}})
	v, err := s.ParseRelease("main")
	require.NoError(t, err)
	assert.Equal(t, Version{Major: 1, Minor: 3, Main: true}, v)
	assert.Equal(t, Version{Major: 1, Minor: 3}, s.Newest(), "main is never the default")
	assert.Equal(t, v, s.Latest())
	_, err = s.ParseRelease("1.03")
	assert.EqualError(t, err, `version "1.03" is not of the form MAJOR.MINOR (decimal numbers without leading zeros) (known: 1.2, 1.3, main)`)
	_, err = s.ParseRelease("1.4")
	assert.EqualError(t, err, "unknown DLPack version 1.4 (known: 1.2, 1.3, main)")
}

func TestLife(t *testing.T) {
	until := Version{Major: 1, Minor: 0}
	l := Life{Since: Version{Major: 0, Minor: 6}, Until: &until}
	assert.True(t, l.In(Version{Major: 0, Minor: 6}))
	assert.True(t, l.In(Version{Major: 0, Minor: 8}))
	assert.False(t, l.In(Version{Major: 1, Minor: 0}), "until is exclusive")
	assert.False(t, Life{Since: Version{Major: 1, Minor: 2}}.In(Version{Major: 1, Minor: 1}))
}

func TestParseTypeRoundTripsToC(t *testing.T) {
	for in, want := range map[string]string{
		"int64_t*":                   "int64_t* x",
		"const char*":                "const char* x",
		"struct DLManagedTensor*":    "struct DLManagedTensor* x",
		"DLManagedTensorVersioned**": "DLManagedTensorVersioned** x",
		"uint8_t":                    "uint8_t x",
	} {
		typ, err := ParseType(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, typ.C("x"))
	}
	for _, bad := range []string{"int64_t[]", "unsigned long", "struct", "*"} {
		_, err := ParseType(bad)
		assert.EqualError(t, err, fmt.Sprintf("cannot parse C type %q", bad))
	}
	_, err := ParseType("void")
	assert.EqualError(t, err, "void is only usable behind a pointer or as a return type")
}

func TestIntRange(t *testing.T) {
	lo, hi, ok := IntRange("int32_t")
	assert.True(t, ok)
	assert.Equal(t, int64(-1<<31), lo)
	assert.Equal(t, int64(1<<31-1), hi)
	_, hi, _ = IntRange("uint8_t")
	assert.Equal(t, int64(255), hi)
	_, _, ok = IntRange("void")
	assert.False(t, ok)
}

// TestLayoutPacksLikeC checks the three data models on a struct that has
// every kind of member: on i386 System V a 64-bit integer is 4-byte aligned,
// on the other 32-bit targets 8-byte aligned.
func TestLayoutPacksLikeC(t *testing.T) {
	s := structOf(t, "uint8_t", "void*", "uint16_t", "uint64_t", "int32_t")
	lp := ABI64.Layout(s)
	assert.Equal(t, []int{0, 8, 16, 24, 32}, offsets(lp))
	assert.Equal(t, 40, lp.Size)
	a4 := ABI32Int64Align4.Layout(s)
	assert.Equal(t, []int{0, 4, 8, 12, 20}, offsets(a4))
	assert.Equal(t, 24, a4.Size)
	assert.Equal(t, 4, a4.Align)
	a8 := ABI32Int64Align8.Layout(s)
	assert.Equal(t, []int{0, 4, 8, 16, 24}, offsets(a8))
	assert.Equal(t, 32, a8.Size)
	assert.Equal(t, 8, a8.Align)
}

func offsets(l Layout) []int {
	var out []int
	for _, f := range l.Fields {
		out = append(out, f.Offset)
	}
	return out
}

func TestMessagePartsSplitTextAndParameters(t *testing.T) {
	check, ok := CheckByID("dtype_bits")
	require.True(t, ok)
	m := &Message{Check: check, Text: "{name} elements have {required} bits, not {bits}"}
	assert.Equal(t, []MessagePart{
		{Param: 1}, {Text: " elements have "}, {Param: 3}, {Text: " bits, not "}, {Param: 2},
	}, m.Parts())
	m.Text = "no parameters"
	assert.Equal(t, []MessagePart{{Text: "no parameters"}}, m.Parts())
}

func TestChecksHaveUniqueIDsAndParams(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Checks {
		assert.Regexp(t, `^[a-z]+(_[a-z0-9]+)*$`, c.ID)
		assert.False(t, seen[c.ID], c.ID)
		seen[c.ID] = true
		assert.NotEmpty(t, c.Purpose, c.ID)
		params := map[string]bool{}
		for _, p := range c.Params {
			assert.False(t, params[p], "%s: %s twice", c.ID, p)
			params[p] = true
		}
	}
}

// TestLayoutChecksListSizeThenFields: the one list every binding guards.
func TestLayoutChecksListSizeThenFields(t *testing.T) {
	s := structOf(t, "uint8_t", "uint64_t")
	api := &API{Decls: []Decl{s}}
	assert.Equal(t, []LayoutCheck{
		{Struct: s, Size: 16, Align: 8},
		{Struct: s, Field: s.Fields[0], Offset: 0, Size: 1},
		{Struct: s, Field: s.Fields[1], Offset: 8, Size: 8},
	}, api.LayoutChecks(ABI64))
	assert.Equal(t, []LayoutCheck{
		{Struct: s, Size: 12, Align: 4},
		{Struct: s, Field: s.Fields[0], Offset: 0, Size: 1},
		{Struct: s, Field: s.Fields[1], Offset: 4, Size: 8},
	}, api.LayoutChecks(ABI32Int64Align4))
}

// structOf is a struct S with one field of each C type, named f0, f1, ...
func structOf(t *testing.T, types ...string) *Struct {
	s := &Struct{Name: "S"}
	for i, c := range types {
		typ, err := ParseType(c)
		require.NoError(t, err)
		s.Fields = append(s.Fields, &Field{Name: fmt.Sprintf("f%d", i), Type: typ})
	}
	return s
}
