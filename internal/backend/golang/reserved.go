package golang

import "github.com/dlgen/dlgen/internal/ir"

// reserved are the words Go takes, which no schema name may be, and the
// method dlgen writes on structs.
var reserved = []ir.Reserved{
	{Lang: "Go", Kind: "keyword", On: ir.AnyName, Words: `break case chan const continue default defer else fallthrough
		for func go goto if import interface map package range return select struct switch type var`},
	{Lang: "Go", Kind: "predeclared identifier", On: ir.AnyName, Words: `any append bool byte cap clear close comparable complex
		complex64 complex128 copy delete error false float32 float64 imag int int8 int16 int32 int64 iota len
		make max min new nil panic print println real recover rune string true uint uint8 uint16 uint32 uint64
		uintptr`},
	{Lang: "Go", Kind: "method dlgen writes on structs (DataType.String)", On: ir.FieldName, Folded: true, Words: `String`},
}
