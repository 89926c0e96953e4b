package c

import (
	"fmt"
	"strings"

	"github.com/dlgen/dlgen/internal/ir"
)

// conditions says, for each data model of ir.ABIs, which compilers and
// targets follow it, as preprocessor conditions joined by ||. They are
// mutually exclusive, and a target none of them names (m68k, AVR, MSP430,
// 32-bit ARM under the old APCS outside Apple, ...) gets no guards rather
// than wrong ones. tests/abi evaluates them on every clang target it knows.
var conditions = map[string][]string{
	ir.ABI64.Name: {
		"(defined(__SIZEOF_POINTER__) && __SIZEOF_POINTER__ == 8)", // GCC, clang
		"defined(_WIN64)", // MSVC
	},
	ir.ABI32Int64Align4.Name: {
		// i386 System V: Linux, the BSDs, Android, macOS.
		"(defined(__i386__) && !defined(_WIN32) && !defined(__CYGWIN__))",
		// Apple's 32-bit ARM (iOS armv7, APCS); watchOS armv7k is AAPCS.
		"(defined(__arm__) && defined(__APPLE__) && !defined(__ARM_ARCH_7K__))",
	},
	ir.ABI32Int64Align8.Name: {
		"defined(_M_IX86)", "defined(_M_ARM)", // MSVC
		"(defined(__i386__) && (defined(_WIN32) || defined(__CYGWIN__)))",
		"(defined(__arm__) && (defined(__ARM_EABI__) || defined(__ARM_ARCH_7K__) || defined(_WIN32)))",
		"(defined(__SIZEOF_POINTER__) && __SIZEOF_POINTER__ == 4 && \\\n     (defined(__x86_64__) || defined(__aarch64__) || defined(__mips__) || \\\n      defined(__powerpc__) || defined(__riscv) || defined(__wasm32__) || \\\n      defined(__sparc__) || defined(__hexagon__)))",
	},
}

type abiGuards struct {
	Name, Condition string
	Checks          []check
}

type check struct {
	Expr, What string
	Want       int
}

// layoutGuards turns, per data model, the layout checks of api (the size
// and every field offset of every struct) into static assertions.
func layoutGuards(api *ir.API) ([]abiGuards, error) {
	var out []abiGuards
	for _, abi := range ir.ABIs {
		cond, ok := conditions[abi.Name]
		if !ok {
			return nil, fmt.Errorf("no preprocessor condition identifies the %s data model", abi.Name)
		}
		g := abiGuards{Name: abi.Name, Condition: strings.Join(cond, " || \\\n    ")}
		for _, lc := range api.LayoutChecks(abi) {
			c := lc.Struct.CType(api.Version())
			if lc.Field == nil {
				g.Checks = append(g.Checks, check{Expr: "sizeof(" + c + ")", Want: lc.Size, What: "size of " + lc.Struct.Name})
				continue
			}
			g.Checks = append(g.Checks, check{
				Expr: fmt.Sprintf("offsetof(%s, %s)", c, lc.Field.Name), Want: lc.Offset,
				What: fmt.Sprintf("offset of %s.%s", lc.Struct.Name, lc.Field.Name),
			})
		}
		out = append(out, g)
	}
	return out, nil
}
