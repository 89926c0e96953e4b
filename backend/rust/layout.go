package rust

import (
	"fmt"
	"strings"

	"github.com/dlgen/dlgen/ir"
)

// conditions says, for each data model of ir.ABIs, which Rust targets
// follow it: cfg predicates, any of which selects the model. They name the
// same targets as the C header's preprocessor conditions (backend/c), are
// mutually exclusive, and a target none of them names (m68k, AVR, MSP430,
// C-SKY, Xtensa, ...) does not build. tests/rust evaluates them on every
// target rustc knows, against the data layout rustc itself uses there.
var conditions = map[string][]pred{
	ir.ABI64.Name: {is("target_pointer_width", "64")},
	ir.ABI32Int64Align4.Name: {
		// i386 System V: Linux, the BSDs, Android, macOS, ...
		allOf(is("target_arch", "x86"), notOf(anyOf(named("windows"), is("target_os", "uefi")))),
		// Apple's 32-bit ARM on iOS (APCS); watchOS armv7k is AAPCS.
		allOf(is("target_arch", "arm"), is("target_os", "ios")),
	},
	ir.ABI32Int64Align8.Name: {
		allOf(is("target_arch", "x86"), anyOf(named("windows"), is("target_os", "uefi"))),
		allOf(is("target_arch", "arm"), notOf(is("target_os", "ios"))),
		allOf(is("target_arch", "x86_64"), is("target_pointer_width", "32")),
		allOf(is("target_arch", "aarch64"), is("target_pointer_width", "32")),
		is("target_arch", "mips"), is("target_arch", "mips32r6"), is("target_arch", "powerpc"),
		is("target_arch", "riscv32"), is("target_arch", "wasm32"), is("target_arch", "sparc"),
		is("target_arch", "hexagon"),
	},
}

// modelCfg is the cfg predicate of one data model.
func modelCfg(abi ir.ABI) (pred, error) {
	cond, ok := conditions[abi.Name]
	if !ok {
		return pred{}, fmt.Errorf("no cfg predicate identifies the %s data model", abi.Name)
	}
	if len(cond) == 1 {
		return cond[0], nil
	}
	return anyOf(cond...), nil
}

// knownCfg is the predicate of every target some model names.
func knownCfg() pred {
	var known []pred
	for _, abi := range ir.ABIs {
		known = append(known, conditions[abi.Name]...)
	}
	return anyOf(known...)
}

type model struct {
	Name, Cfg string // Cfg is the whole attribute, as rustfmt lays it out
	Checks    []string
}

// models lists, per data model, its cfg attribute and the assertions of
// api.LayoutChecks: each struct's size and alignment, each field's offset
// (a field's size is its type's, checked where that type is).
func models(api *ir.API) ([]model, error) {
	var out []model
	for _, abi := range ir.ABIs {
		p, err := modelCfg(abi)
		if err != nil {
			return nil, err
		}
		m := model{Name: abi.Name, Cfg: cfgAttr(p)}
		for _, c := range api.LayoutChecks(abi) {
			s := c.Struct.Name
			if c.Field == nil {
				m.Checks = append(m.Checks,
					assertLine(fmt.Sprintf("size_of::<%s>() == %d", s, c.Size)),
					assertLine(fmt.Sprintf("align_of::<%s>() == %d", s, c.Align)))
				continue
			}
			m.Checks = append(m.Checks, assertLine(fmt.Sprintf("offset_of!(%s, %s) == %d", s, ident(c.Field.Name), c.Offset)))
		}
		out = append(out, m)
	}
	return out, nil
}

// assertLine is `assert!(cond);` in a const block, as rustfmt lays it out
// (a call of one argument stays on its line while it fits).
func assertLine(cond string) string {
	const indent = "    "
	one := indent + "assert!(" + cond + ");"
	if len(one) <= maxWidth {
		return one
	}
	return indent + "assert!(\n" + indent + indent + cond + "\n" + indent + ");"
}

// callWidth is rustfmt's fn_call_width (and attr_fn_like_width): a call
// whose arguments are wider goes vertical.
const callWidth = 60

// cfgAttr renders #[cfg(p)] as rustfmt lays it out.
func cfgAttr(p pred) string { return "#[cfg(" + p.format(0) + ")]" }

// pred is a cfg predicate: a name (windows), key = "value", or an
// operator (any, all, not) over predicates.
type pred struct {
	leaf string // for a name or key = "value"
	op   string
	args []pred
}

func named(n string) pred       { return pred{leaf: n} }
func is(key, value string) pred { return pred{leaf: key + ` = "` + value + `"`} }
func anyOf(args ...pred) pred   { return pred{op: "any", args: args} }
func allOf(args ...pred) pred   { return pred{op: "all", args: args} }
func notOf(arg pred) pred       { return pred{op: "not", args: []pred{arg}} }
func (p pred) isLeaf() bool     { return p.op == "" }
func (p pred) argsLine() string { return strings.Join(lines(p.args), ", ") }
func (p pred) line() string {
	if p.isLeaf() {
		return p.leaf
	}
	return p.op + "(" + p.argsLine() + ")"
}

func lines(ps []pred) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.line()
	}
	return out
}

// format renders p at column indent. An operator whose arguments are wider
// than callWidth puts one per line; the argument of not(...) or of a
// one-argument any(...) continues on its line, as rustfmt overflows it.
func (p pred) format(indent int) string {
	if p.isLeaf() {
		return p.leaf
	}
	if len(p.argsLine()) <= callWidth && indent+len(p.line())+len("#[cfg()]") <= maxWidth {
		return p.line()
	}
	if len(p.args) == 1 && !p.args[0].isLeaf() {
		return p.op + "(" + p.args[0].format(indent) + ")"
	}
	pad := strings.Repeat(" ", indent+4)
	parts := make([]string, len(p.args))
	for i, a := range p.args {
		parts[i] = pad + a.format(indent+4)
	}
	return p.op + "(\n" + strings.Join(parts, ",\n") + "\n" + strings.Repeat(" ", indent) + ")"
}
