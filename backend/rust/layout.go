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
var conditions = map[string][]string{
	ir.ABI64.Name: {`target_pointer_width = "64"`},
	ir.ABI32Int64Align4.Name: {
		// i386 System V: Linux, the BSDs, Android, macOS, ...
		`all(target_arch = "x86", not(any(windows, target_os = "uefi")))`,
		// Apple's 32-bit ARM on iOS (APCS); watchOS armv7k is AAPCS.
		`all(target_arch = "arm", target_os = "ios")`,
	},
	ir.ABI32Int64Align8.Name: {
		`all(target_arch = "x86", any(windows, target_os = "uefi"))`,
		`all(target_arch = "arm", not(target_os = "ios"))`,
		`all(target_arch = "x86_64", target_pointer_width = "32")`,
		`all(target_arch = "aarch64", target_pointer_width = "32")`,
		`target_arch = "mips"`, `target_arch = "mips32r6"`, `target_arch = "powerpc"`,
		`target_arch = "riscv32"`, `target_arch = "wasm32"`, `target_arch = "sparc"`,
		`target_arch = "hexagon"`,
	},
}

// modelCfg is the cfg predicate of one data model.
func modelCfg(abi ir.ABI) (string, error) {
	cond, ok := conditions[abi.Name]
	if !ok {
		return "", fmt.Errorf("no cfg predicate identifies the %s data model", abi.Name)
	}
	if len(cond) == 1 {
		return cond[0], nil
	}
	return "any(" + strings.Join(cond, ", ") + ")", nil
}

// knownCfg is the predicate of every target some model names.
func knownCfg() string {
	var all []string
	for _, abi := range ir.ABIs {
		all = append(all, conditions[abi.Name]...)
	}
	return "any(" + strings.Join(all, ", ") + ")"
}

type model struct {
	Name, Cfg string // Cfg is the whole attribute, as rustfmt lays it out
	Checks    []string
}

// models lists, per data model, its cfg attribute and the size, alignment
// and every field offset of every struct of api.
func models(api *ir.API) ([]model, error) {
	var out []model
	for _, abi := range ir.ABIs {
		pred, err := modelCfg(abi)
		if err != nil {
			return nil, err
		}
		m := model{Name: abi.Name, Cfg: cfgAttr(pred)}
		for _, s := range api.Structs() {
			l := abi.Layout(s)
			m.Checks = append(m.Checks,
				assertLine(fmt.Sprintf("size_of::<%s>() == %d", s.Name, l.Size)),
				assertLine(fmt.Sprintf("align_of::<%s>() == %d", s.Name, l.Align)))
			for i, f := range l.Fields {
				m.Checks = append(m.Checks, assertLine(fmt.Sprintf("offset_of!(%s, %s) == %d", s.Name, ident(s.Fields[i].Name), f.Offset)))
			}
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

// cfgAttr renders #[cfg(pred)] as rustfmt lays it out.
func cfgAttr(pred string) string {
	return "#[cfg(" + meta(parseMeta(pred), 0, true) + ")]"
}

// metaItem is a cfg predicate: a name, with a value (key = "value") or a
// list of predicates (any(...)).
type metaItem struct {
	text string // the whole item, for a leaf
	name string
	list []metaItem
}

func (m metaItem) isList() bool { return m.list != nil }

func (m metaItem) line() string {
	if !m.isList() {
		return m.text
	}
	parts := make([]string, len(m.list))
	for i, it := range m.list {
		parts[i] = it.line()
	}
	return m.name + "(" + strings.Join(parts, ", ") + ")"
}

// parseMeta parses a predicate written by this package (well formed).
func parseMeta(s string) metaItem {
	s = strings.TrimSpace(s)
	open := strings.Index(s, "(")
	if open < 0 || strings.Contains(s[:open], "=") {
		return metaItem{text: s}
	}
	it := metaItem{name: s[:open], list: []metaItem{}}
	depth, start := 0, open+1
	for i := open + 1; i < len(s)-1; i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				it.list = append(it.list, parseMeta(s[start:i]))
				start = i + 1
			}
		}
	}
	return metaItem{name: it.name, list: append(it.list, parseMeta(s[start:len(s)-1]))}
}

// meta renders m at column indent. A list whose arguments are wider than
// callWidth puts one per line; the last argument of a one-argument list
// (not(any(...))) continues on its line, as rustfmt overflows it.
func meta(m metaItem, indent int, top bool) string {
	if !m.isList() {
		return m.text
	}
	one := m.line()
	args := strings.TrimSuffix(strings.TrimPrefix(one, m.name+"("), ")")
	if len(args) <= callWidth && indent+len(one)+len("#[cfg()]") <= maxWidth {
		return one
	}
	if len(m.list) == 1 && m.list[0].isList() {
		return m.name + "(" + meta(m.list[0], indent, top) + ")"
	}
	pad := strings.Repeat(" ", indent+4)
	parts := make([]string, len(m.list))
	for i, it := range m.list {
		parts[i] = pad + meta(it, indent+4, false)
	}
	return m.name + "(\n" + strings.Join(parts, ",\n") + "\n" + strings.Repeat(" ", indent) + ")"
}
