package ir

import (
	"strings"
)

// NameKind is what a schema name names, as the lists of ReservedWords
// apply to it.
type NameKind uint8

// The kinds of names, which a list applies to.
const (
	TypeName       NameKind = 1 << iota // a struct (or its tag), enum, flags group or function type
	FieldName                           // a struct's field
	EnumeratorName                      // an enumerator or a flag
	MacroName                           // a macro (or the header guard)
	ParamName                           // a function type's parameter
	// AnyName is every kind.
	AnyName = TypeName | FieldName | EnumeratorName | MacroName | ParamName
)

// Reserved is one list of words a language dlgen writes will not take as
// a name, or takes with another meaning. The schema feeds every language,
// so a name on any list is refused, whatever -lang selects
// (docs/schema.md#names).
type Reserved struct {
	Lang  string   // the language, as an error names it
	Kind  string   // what the words are to it
	Words string   // space-separated
	On    NameKind // the names the list applies to
	// Folded: a name is on the list if it folds (Fold) as a word does,
	// as Go's capitalised names come from the schema's.
	Folded bool
}

// notParams is every kind but parameters. Rust's lists do not apply to
// parameters: upstream DLPack names the deleter's parameter self, and the
// Rust backend writes a parameter (or field) on a Rust list with a
// trailing underscore (RustKeyword).
const notParams = AnyName &^ ParamName

// ReservedWords is the one table of reserved words: every list of every
// language, which the schema loader checks every name against and the
// backends read their keywords from. OutputNames, the names dlgen's
// output uses itself, derived from it by tests/names, are part of it.
var ReservedWords = append([]Reserved{
	{Lang: "C", Kind: "keyword", On: AnyName, Words: `auto break case char const continue default do double else enum
		extern float for goto if inline int long register restrict return short signed sizeof static struct
		switch typedef union unsigned void volatile while _Alignas _Alignof _Atomic _Bool _Complex _Generic
		_Imaginary _Noreturn _Static_assert _Thread_local`},
	{Lang: "C", Kind: "C23 keyword", On: AnyName, Words: `alignas alignof bool constexpr false nullptr static_assert
		thread_local true typeof typeof_unqual _BitInt _Decimal32 _Decimal64 _Decimal128`},
	{Lang: "C", Kind: "GNU C keyword", On: AnyName, Words: `asm`},
	{Lang: "C", Kind: "macro of the headers dlpack.h includes", On: AnyName, Words: `NULL offsetof`},
	{Lang: "C++", Kind: "keyword", On: AnyName, Words: `and and_eq asm bitand bitor catch char8_t char16_t char32_t
		class co_await co_return co_yield compl concept consteval constexpr constinit const_cast decltype delete
		dynamic_cast explicit export friend mutable namespace new noexcept not not_eq operator or or_eq private
		protected public reinterpret_cast requires static_cast template this throw try typeid typename using
		virtual wchar_t xor xor_eq`},
	{Lang: "Go", Kind: "keyword", On: AnyName, Words: `break case chan const continue default defer else fallthrough
		for func go goto if import interface map package range return select struct switch type var`},
	{Lang: "Go", Kind: "predeclared identifier", On: AnyName, Words: `any append bool byte cap clear close comparable complex
		complex64 complex128 copy delete error false float32 float64 imag int int8 int16 int32 int64 iota len
		make max min new nil panic print println real recover rune string true uint uint8 uint16 uint32 uint64
		uintptr`},
	{Lang: "Python", Kind: "keyword", On: AnyName, Words: `False None True and as assert async await break class
		continue def del elif else except finally for from global if import in is lambda nonlocal not or pass
		raise return try while with yield`},
	{Lang: "Python", Kind: "soft keyword", On: AnyName, Words: `_ case match type`},
	{Lang: "Python", Kind: "name enum reserves (enumerators are enum.IntEnum members)", On: AnyName, Words: `mro`},
	{Lang: "Python", Kind: "ctypes attribute or class method", On: AnyName, Words: `_fields_ _pack_
		_anonymous_ _align_ _layout_ _type_ _length_ _objects _b_base_ _b_needsfree_ _as_parameter_ _argtypes_
		_restype_ _errcheck_ _flags_ _swappedbytes_ from_address from_buffer from_buffer_copy from_param in_dll`},
	{Lang: "Cython", Kind: "keyword or built-in type", On: AnyName, Words: `DEF ELIF ELSE IF NULL api bint by cdef
		cimport cpdef cppclass ctypedef extern fused gil include inline noexcept nogil object public readonly
		Py_ssize_t size_t`},
	{Lang: "Rust", Kind: "strict keyword", On: notParams, Words: `as async await break const continue crate dyn else enum extern
		false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait
		true type unsafe use where while`},
	{Lang: "Rust", Kind: "reserved keyword", On: notParams, Words: `_ abstract become box do final gen macro override priv try
		typeof unsized virtual yield`},
	// Methods dlgen writes, which a field (Go) or an enumerator (Rust) of the
	// same name would collide with.
	{Lang: "Go", Kind: "method dlgen writes on structs (DataType.String)", On: FieldName, Folded: true, Words: `String`},
	{Lang: "Rust", Kind: "method dlgen writes on enums", On: EnumeratorName, Words: `name is_host_readable
		is_streamless is_addressable is_opaque fixed_bits`},
}, OutputNames...)

var reservedIndex = func() map[string][]int {
	m := map[string][]int{}
	for i, r := range ReservedWords {
		for _, w := range strings.Fields(r.Words) {
			if r.Folded {
				w = Fold(w)
			}
			m[w] = append(m[w], i)
		}
	}
	return m
}()

// ReservedAs lists why name cannot name a schema element of kind in every
// language: each list of ReservedWords it is on ("a C23 keyword in C"),
// and the patterns C, C++ and Python reserve. Empty means the name is
// free everywhere.
func ReservedAs(name string, kind NameKind) []string {
	var why []string
	for _, i := range reservedIndex[name] {
		if r := ReservedWords[i]; r.On&kind != 0 && !r.Folded {
			why = append(why, "a "+r.Kind+" in "+r.Lang)
		}
	}
	for _, i := range reservedIndex[Fold(name)] {
		if r := ReservedWords[i]; r.On&kind != 0 && r.Folded {
			why = append(why, "a "+r.Kind+" in "+r.Lang)
		}
	}
	switch {
	case strings.Contains(name, "__"):
		why = append(why, "reserved to the implementation by C and C++ (a double underscore)")
	case len(name) > 1 && name[0] == '_' && 'A' <= name[1] && name[1] <= 'Z':
		why = append(why, "reserved to the implementation by C (an underscore and a capital)")
	case len(name) > 2 && name[0] == '_' && name[len(name)-1] == '_' && reservedIndex[name] == nil:
		why = append(why, "a _sunder_ name, which Python's ctypes and enum reserve")
	}
	return why
}

// Fold is name in lower case without underscores: two names of one scope
// that fold alike may become one name in some language (Go capitalises
// self and Self alike; Rust writes a keyword type as type_).
func Fold(name string) string { return strings.ToLower(strings.ReplaceAll(name, "_", "")) }

// RustKeyword reports whether the Rust backend must write a field or
// parameter named name with a trailing underscore: it is on a Rust list.
func RustKeyword(name string) bool {
	for _, i := range reservedIndex[name] {
		if r := ReservedWords[i]; r.Lang == "Rust" && r.On&FieldName != 0 {
			return true
		}
	}
	return false
}

// Keyword reports whether word is a keyword (not a soft one) of lang.
func Keyword(lang, word string) bool {
	for _, i := range reservedIndex[word] {
		if r := ReservedWords[i]; r.Lang == lang && r.Kind == "keyword" {
			return true
		}
	}
	return false
}
