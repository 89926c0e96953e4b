package c

import "github.com/dlgen/dlgen/internal/ir"

// reserved are the words C and C++ take, which no schema name may be: the
// header is C and C++, and so are the helpers and the extensions that
// include them.
var reserved = append([]ir.Reserved{
	{Lang: "C", Kind: "keyword", On: ir.AnyName, Words: `auto break case char const continue default do double else enum
		extern float for goto if inline int long register restrict return short signed sizeof static struct
		switch typedef union unsigned void volatile while _Alignas _Alignof _Atomic _Bool _Complex _Generic
		_Imaginary _Noreturn _Static_assert _Thread_local`},
	{Lang: "C", Kind: "C23 keyword", On: ir.AnyName, Words: `alignas alignof bool constexpr false nullptr static_assert
		thread_local true typeof typeof_unqual _BitInt _Decimal32 _Decimal64 _Decimal128`},
	{Lang: "C", Kind: "GNU C keyword", On: ir.AnyName, Words: `asm`},
	{Lang: "C", Kind: "macro of the headers dlpack.h includes", On: ir.AnyName, Words: `NULL offsetof`},
	{Lang: "C++", Kind: "keyword", On: ir.AnyName, Words: `and and_eq asm bitand bitor catch char8_t char16_t char32_t
		class co_await co_return co_yield compl concept consteval constexpr constinit const_cast decltype delete
		dynamic_cast explicit export friend mutable namespace new noexcept not not_eq operator or or_eq private
		protected public reinterpret_cast requires static_cast template this throw try typeid typename using
		virtual wchar_t xor xor_eq`},
}, outputNames...)
