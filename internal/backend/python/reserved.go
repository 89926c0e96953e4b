package python

import "github.com/dlgen/dlgen/internal/ir"

// reserved are the words Python, ctypes, enum and Cython take, which no
// schema name may be.
var reserved = append([]ir.Reserved{
	{Lang: "Python", Kind: "keyword", On: ir.AnyName, Words: `False None True and as assert async await break class
		continue def del elif else except finally for from global if import in is lambda nonlocal not or pass
		raise return try while with yield`},
	{Lang: "Python", Kind: "soft keyword", On: ir.AnyName, Words: `_ case match type`},
	{Lang: "Python", Kind: "name enum reserves (enumerators are enum.IntEnum members)", On: ir.AnyName, Words: `mro`},
	{Lang: "Python", Kind: "ctypes attribute or class method", On: ir.AnyName, Words: `_fields_ _pack_
		_anonymous_ _align_ _layout_ _type_ _length_ _objects _b_base_ _b_needsfree_ _as_parameter_ _argtypes_
		_restype_ _errcheck_ _flags_ _swappedbytes_ from_address from_buffer from_buffer_copy from_param in_dll`},
	{Lang: "Cython", Kind: "keyword or built-in type", On: ir.AnyName, Words: `DEF ELIF ELSE IF NULL api bint by cdef
		cimport cpdef cppclass ctypedef extern fused gil include inline noexcept nogil object public readonly
		Py_ssize_t size_t`},
}, outputNames...)
