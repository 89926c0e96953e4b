package rust

import "github.com/dlgen/dlgen/internal/ir"

// notParams is every kind but parameters. Rust's lists do not apply to
// parameters: upstream DLPack names the deleter's parameter self, and the
// backend writes a parameter (or field) on a Rust list with a trailing
// underscore (ident).
const notParams = ir.AnyName &^ ir.ParamName

// reserved are the words Rust takes, which no schema name but a parameter
// may be, and the methods dlgen writes on enums.
var reserved = append([]ir.Reserved{
	{Lang: "Rust", Kind: "strict keyword", On: notParams, Words: `as async await break const continue crate dyn else enum extern
		false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait
		true type unsafe use where while`},
	{Lang: "Rust", Kind: "reserved keyword", On: notParams, Words: `_ abstract become box do final gen macro override priv try
		typeof unsized virtual yield`},
	{Lang: "Rust", Kind: "method dlgen writes on enums", On: ir.EnumeratorName, Words: `name is_host_readable
		is_streamless is_addressable is_opaque fixed_bits`},
}, outputNames...)
