package schema

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	_ "github.com/dlgen/dlgen/internal/backend/all" // every language's reserved words (backend.Registration.Reserved)
	"github.com/dlgen/dlgen/internal/ir"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withName is the default schema with the text old (once) replaced by new.
func withName(t *testing.T, old, new string) ([]byte, int) {
	t.Helper()
	src := string(DefaultBytes())
	i := strings.Index(src, old)
	require.GreaterOrEqual(t, i, 0, old)
	line := strings.Count(src[:i], "\n") + 1
	return []byte(src[:i] + new + src[i+len(old):]), line
}

// TestEveryReservedWordIsRefused: each word of each list of the one
// table (every backend's Reserved, the names its output uses included), as a
// name of a kind the list applies to, is a positioned error naming the
// word and the language, whichever language would be written.
func TestEveryReservedWordIsRefused(t *testing.T) {
	type site struct {
		kind      ir.NameKind
		old, name string // a name of that kind in the default schema, as it is written there, and the name
		what      string
	}
	sites := []site{
		{ir.FieldName, "{name: lanes, type: uint16_t,", "lanes", "field name"},
		{ir.ParamName, "{name: prototype, type: DLTensor*}", "prototype", "parameter name"},
		{ir.EnumeratorName, "{name: kDLCPU, value: 1,", "kDLCPU", "enumerator name"},
		{ir.TypeName, "  - struct: DLDevice\n", "DLDevice", "struct name"},
		{ir.MacroName, "  - name: DLPACK_MAJOR_VERSION\n", "DLPACK_MAJOR_VERSION", "macro name"},
	}
	lists := ir.ReservedWords()
	require.True(t, slices.ContainsFunc(lists, func(r ir.Reserved) bool { return r.Output }), "no backend registered the names its output uses")
	for _, list := range lists {
		first := slices.IndexFunc(sites, func(s site) bool { return list.On&s.kind != 0 })
		for w, word := range strings.Fields(list.Words) {
			for i, site := range sites {
				if list.On&site.kind == 0 || w > 0 && i != first {
					continue // every word once, and each list at each kind it applies to
				}
				src, line := withName(t, site.old, strings.Replace(site.old, site.name, `"`+word+`"`, 1)) // quoted: YAML reads NULL as null
				_, err := Load("reserved.yaml", src)
				require.Error(t, err, "%s %s (%s %s) loads", site.what, word, list.Lang, list.Kind)
				want := fmt.Sprintf(`reserved.yaml:%d:\d+: %s %q is .*a %s in %s[;, ]`, line, site.what, word, regexp.QuoteMeta(list.Kind), regexp.QuoteMeta(list.Lang))
				assert.Regexp(t, regexp.MustCompile(want), err.Error())
			}
		}
	}
}

// TestReservedNamesOfEveryKind: typeof (a C23 keyword and Rust's) is
// refused wherever the schema names something; the patterns C and Python
// reserve are too.
func TestReservedNamesOfEveryKind(t *testing.T) {
	for _, c := range []struct{ old, new, want string }{
		{"  - struct: DLDevice\n", "  - struct: typeof\n", `struct name "typeof" is a C23 keyword in C and a reserved keyword in Rust; a schema name must be free in every language dlgen writes`},
		{"  - enum: DLDeviceType\n", "  - enum: typeof\n", `enum name "typeof"`},
		{"      - {name: kDLCPU, value: 1,", "      - {name: typeof, value: 1,", `enumerator name "typeof"`},
		{"  - flags: DLPACK_FLAG_BITMASK\n", "  - flags: typeof\n", `flags name "typeof"`},
		{"      - name: DLPACK_FLAG_BITMASK_READ_ONLY\n", "      - name: typeof\n", `flag name "typeof"`},
		{"  - name: DLPACK_MAJOR_VERSION\n", "  - name: typeof\n", `macro name "typeof"`},
		{"  - functype: DLPackManagedTensorAllocator\n", "  - functype: typeof\n", `functype name "typeof"`},
		{"{name: prototype, type: DLTensor*}", "{name: typeof, type: DLTensor*}", `parameter name "typeof" is a C23 keyword in C; a schema name`},
		{"renamed: {in: \"0.5\", from: kDLGPU}", "renamed: {in: \"0.5\", from: typeof}", `renamed.from "typeof"`},
		{"{name: lanes, type: uint16_t,", "{name: _fields_, type: uint16_t,", `field name "_fields_" is a ctypes attribute or class method in Python`},
		{"{name: lanes, type: uint16_t,", "{name: _order_, type: uint16_t,", `field name "_order_" is a _sunder_ name, which Python's ctypes and enum reserve`},
		{"{name: lanes, type: uint16_t,", "{name: lanes__, type: uint16_t,", `field name "lanes__" is reserved to the implementation by C and C++ (a double underscore)`},
		{"{name: lanes, type: uint16_t,", "{name: _Lanes, type: uint16_t,", `field name "_Lanes" is reserved to the implementation by C (an underscore and a capital)`},
		{"{name: lanes, type: uint16_t,", "{name: String, type: uint16_t,", `field name "String" is a method dlgen writes on structs (DataType.String) in Go`},
		{"{name: lanes, type: uint16_t,", "{name: box, type: uint16_t,", `field name "box" is a reserved keyword in Rust`},
	} {
		src, line := withName(t, c.old, c.new)
		_, err := Load("reserved.yaml", src)
		require.Error(t, err, c.new)
		assert.Regexp(t, fmt.Sprintf(`(^|\n)reserved\.yaml:%d:\d+: %s`, line, regexp.QuoteMeta(c.want)), err.Error())
	}
}

// TestNamesOneLanguageWouldMergeAreRefused: fields or parameters that
// differ only in case or underscores become one name in Go (Self) or
// Rust (self_).
func TestNamesOneLanguageWouldMergeAreRefused(t *testing.T) {
	for _, c := range []struct{ old, new, want string }{
		{"{name: lanes, type: uint16_t,", "{name: Bits, type: uint16_t,", `fields Bits and bits of DLDataType \(at .*\) differ only in case or underscores`},
		{"{name: lanes, type: uint16_t,", "{name: bits_, type: uint16_t,", `fields bits_ and bits of DLDataType`},
		{"{name: prototype, type: DLTensor*}", "{name: out_, type: DLTensor*}", `parameters "out_" and "out" of DLPackManagedTensorAllocator differ only in case or underscores`},
	} {
		src, line := withName(t, c.old, c.new)
		_, err := Load("merge.yaml", src)
		require.Error(t, err, c.new)
		// At the second of the two, on line or later.
		assert.Regexp(t, fmt.Sprintf(`(^|\n)merge\.yaml:(%d|%d):\d+: %s`, line, line+1, c.want), err.Error())
	}
	// Upstream's deleter takes self: parameters are free of Rust's lists.
	src, _ := withName(t, "{name: prototype, type: DLTensor*}", "{name: crate, type: DLTensor*}")
	_, err := Load("param.yaml", src)
	assert.NoError(t, err)
}

// TestDocTextThatBreaksTheBuildIsRefused: prose is copied into C comments,
// Rust doc comments and Python docstrings, so text that would not build
// there is refused at its position: "/*" inside a C comment (-Wcomment,
// an error under -Werror), "*/", and every bidirectional control (U+202E
// and the other Trojan Source codepoints rustc refuses in comments).
func TestDocTextThatBreaksTheBuildIsRefused(t *testing.T) {
	docs := map[string]string{
		"opens /* a comment": `doc may not contain /\*, \*/`,
		"ends */ a comment":  `doc may not contain /\*, \*/`,
	}
	for _, r := range unicode.Bidi_Control.R16 {
		for c := rune(r.Lo); c <= rune(r.Hi); c += rune(r.Stride) {
			docs["reads "+string(c)+"backwards"] = fmt.Sprintf(`may not contain U\+%04X, a bidirectional control`, c)
		}
	}
	require.Len(t, docs, 2+12, "the Trojan Source codepoints: U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069")
	for doc, want := range docs {
		src, line := withName(t, `doc: "Ordinary host memory."`, "doc: "+strconv.Quote(doc))
		_, err := Load("doc.yaml", src)
		require.Error(t, err, "%q", doc)
		assert.Regexp(t, fmt.Sprintf(`^doc\.yaml:%d:\d+: .*%s`, line, want), err.Error())
	}
}

// TestNamesTheOutputUsesAreRefused: the names the audit of issue 38 found
// accepted and breaking the output ("type object 'ctypes' has no attribute
// 'Structure'", "conflicting types for 'int64_t'", "the name `c_int` is
// defined multiple times") are refused at their position, as every name
// of the output's names (ir.Reserved's Output) is.
func TestNamesTheOutputUsesAreRefused(t *testing.T) {
	for lang, names := range map[string][]string{
		"Python": {"sys", "ctypes", "os", "math", "gc", "typing", "threading", "datetime"},
		"C":      {"int64_t", "uint32_t", "ptrdiff_t", "memcpy", "strlen", "dlgen_error", "dlgen_rule", "DLGEN_OK"},
		"Rust":   {"Option", "c_int", "c_void", "rules", "layout", "check", "C_DATA_MODEL"},
	} {
		for _, name := range names {
			src, line := withName(t, "  - struct: DLDevice\n", "  - struct: "+name+"\n")
			_, err := Load("output.yaml", src)
			require.Error(t, err, "struct %s loads", name)
			assert.Regexp(t, fmt.Sprintf(`(^|\n)output\.yaml:%d:\d+: struct name %q is .*a name (dlgen's|a standard header dlgen's C headers include) .* in %s[;, ]`, line, name, lang), err.Error())
		}
	}
}
