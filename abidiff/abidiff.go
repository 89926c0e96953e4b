// Package abidiff compares two releases of the schema and reports what a
// binding must change, as findings of named rules in the manner of buf's
// breaking-change checks. Rules are data: each has an ID, a category and a
// purpose, and one function that reports its findings.
//
// Category ABI means compiled code that assumed the older release would
// misread memory or values; API means source written against the older
// release no longer compiles or means something else; INFO is a change
// that breaks nothing (an addition, a new macro value).
package abidiff

import (
	"fmt"
	"sort"

	"github.com/dlgen/dlgen/ir"
)

// Category says how serious a finding is.
type Category string

const (
	ABI  Category = "ABI"
	API  Category = "API"
	Info Category = "INFO"
)

// Rule is one check.
type Rule struct {
	ID       string
	Category Category
	Purpose  string
	check    func(d *diff)
}

// Finding is one rule's report about one element.
type Finding struct {
	Rule     string
	Category Category
	Message  string
}

func (f Finding) String() string { return fmt.Sprintf("%s %s: %s", f.Category, f.Rule, f.Message) }

// Breaking reports whether the finding is an ABI or API break.
func (f Finding) Breaking() bool { return f.Category != Info }

// Rules are every check, in report order.
var Rules = []Rule{
	{"STRUCT_NO_DELETE", ABI, "a struct of the old release still exists", structNoDelete},
	{"STRUCT_SIZE_SAME", ABI, "a struct has the same size on every data model", structSizeSame},
	{"FIELD_NO_DELETE", ABI, "a field of the old release still exists", fieldNoDelete},
	{"FIELD_OFFSET_SAME", ABI, "a field has the same offset and size on every data model", fieldOffsetSame},
	{"FIELD_TYPE_SAME", API, "a field is spelled with the same C type", fieldTypeSame},
	{"ENUM_VALUE_NO_DELETE", ABI, "an enumerator value of the old release still exists", enumValueNoDelete},
	{"ENUM_VALUE_SAME", ABI, "an enumerator keeps its value", enumValueSame},
	{"ENUM_VALUE_NAME_SAME", API, "a value keeps its enumerator name", enumValueNameSame},
	{"FLAG_BIT_SAME", ABI, "a flag keeps its bit, and no flag disappears", flagBitSame},
	{"MACRO_NO_DELETE", API, "a macro of the old release is still defined", macroNoDelete},
	{"FUNCTYPE_SAME", ABI, "a function-pointer type keeps its signature", functypeSame},
	{"ADDITION", Info, "what the new release adds", additions},
	{"MACRO_VALUE", Info, "a macro's value changes (version numbers do, every release)", macroValue},
}

type diff struct {
	old, new *ir.API
	rule     Rule
	findings []Finding
}

func (d *diff) report(format string, args ...any) {
	d.findings = append(d.findings, Finding{Rule: d.rule.ID, Category: d.rule.Category, Message: fmt.Sprintf(format, args...)})
}

// Compare runs every rule from old to new.
func Compare(old, new *ir.API) []Finding {
	d := &diff{old: old, new: new}
	for _, r := range Rules {
		d.rule = r
		r.check(d)
	}
	return d.findings
}

func structs(a *ir.API) map[string]*ir.Struct {
	m := map[string]*ir.Struct{}
	for _, s := range a.Structs() {
		m[s.Name] = s
	}
	return m
}

func fields(s *ir.Struct) map[string]*ir.Field {
	m := map[string]*ir.Field{}
	for _, f := range s.Fields {
		m[f.Name] = f
	}
	return m
}

// pairs calls f for each struct present in both releases, in old order.
func (d *diff) pairs(f func(o, n *ir.Struct)) {
	news := structs(d.new)
	for _, o := range d.old.Structs() {
		if n, ok := news[o.Name]; ok {
			f(o, n)
		}
	}
}

func structNoDelete(d *diff) {
	news := structs(d.new)
	for _, o := range d.old.Structs() {
		if news[o.Name] == nil {
			d.report("struct %s is gone", o.Name)
		}
	}
}

func structSizeSame(d *diff) {
	d.pairs(func(o, n *ir.Struct) {
		for _, abi := range ir.ABIs {
			if a, b := abi.Layout(o).Size, abi.Layout(n).Size; a != b {
				d.report("%s is %d bytes on %s, was %d", o.Name, b, abi.Name, a)
			}
		}
	})
}

func fieldNoDelete(d *diff) {
	d.pairs(func(o, n *ir.Struct) {
		nf := fields(n)
		for _, f := range o.Fields {
			if nf[f.Name] == nil {
				d.report("%s.%s is gone", o.Name, f.Name)
			}
		}
	})
}

func fieldOffsetSame(d *diff) {
	d.pairs(func(o, n *ir.Struct) {
		for _, abi := range ir.ABIs {
			nl := map[string]ir.FieldLayout{}
			for _, f := range abi.Layout(n).Fields {
				nl[f.Name] = f
			}
			for _, f := range abi.Layout(o).Fields {
				g, ok := nl[f.Name]
				if ok && (g.Offset != f.Offset || g.Size != f.Size) {
					d.report("%s.%s is at %d (%d bytes) on %s, was at %d (%d bytes)", o.Name, f.Name, g.Offset, g.Size, abi.Name, f.Offset, f.Size)
				}
			}
		}
	})
}

func fieldTypeSame(d *diff) {
	d.pairs(func(o, n *ir.Struct) {
		nf := fields(n)
		for _, f := range o.Fields {
			if g := nf[f.Name]; g != nil && g.Type.C("") != f.Type.C("") {
				d.report("%s.%s is %s, was %s", o.Name, f.Name, g.Type.C(""), f.Type.C(""))
			}
		}
	})
}

func enums(a *ir.API) map[string]*ir.Enum {
	m := map[string]*ir.Enum{}
	for _, e := range a.Enums() {
		m[e.Name] = e
	}
	return m
}

// enumPairs calls f for each enum present in both releases, with the new
// one's values by value and by name.
func (d *diff) enumPairs(f func(o *ir.Enum, byValue map[int64]*ir.Enumerator, byName map[string]*ir.Enumerator)) {
	news := enums(d.new)
	for _, o := range d.old.Enums() {
		n := news[o.Name]
		if n == nil {
			d.report("enum %s is gone", o.Name)
			continue
		}
		byValue, byName := map[int64]*ir.Enumerator{}, map[string]*ir.Enumerator{}
		for _, e := range n.Values {
			byValue[e.Value], byName[e.Name] = e, e
		}
		f(o, byValue, byName)
	}
}

func enumValueNoDelete(d *diff) {
	d.enumPairs(func(o *ir.Enum, byValue map[int64]*ir.Enumerator, _ map[string]*ir.Enumerator) {
		for _, e := range o.Values {
			if byValue[e.Value] == nil {
				d.report("%s value %d (%s) is gone", o.Name, e.Value, e.Name)
			}
		}
	})
}

func enumValueSame(d *diff) {
	d.enumPairs(func(o *ir.Enum, _ map[int64]*ir.Enumerator, byName map[string]*ir.Enumerator) {
		for _, e := range o.Values {
			if n := byName[e.Name]; n != nil && n.Value != e.Value {
				d.report("%s is %d, was %d", e.Name, n.Value, e.Value)
			}
		}
	})
}

func enumValueNameSame(d *diff) {
	d.enumPairs(func(o *ir.Enum, byValue map[int64]*ir.Enumerator, _ map[string]*ir.Enumerator) {
		for _, e := range o.Values {
			if n := byValue[e.Value]; n != nil && n.Name != e.Name {
				d.report("%s value %d is named %s, was %s", o.Name, e.Value, n.Name, e.Name)
			}
		}
	})
}

func flagBits(a *ir.API) map[string]int {
	m := map[string]int{}
	for _, decl := range a.Decls {
		if f, ok := decl.(*ir.Flags); ok {
			for _, b := range f.Bits {
				m[b.Name] = b.Bit
			}
		}
	}
	return m
}

func flagBitSame(d *diff) {
	news := flagBits(d.new)
	for _, name := range sortedKeys(flagBits(d.old)) {
		bit := flagBits(d.old)[name]
		switch nb, ok := news[name]; {
		case !ok:
			d.report("flag %s is gone", name)
		case nb != bit:
			d.report("flag %s is bit %d, was %d", name, nb, bit)
		}
	}
}

func macroNoDelete(d *diff) {
	for _, m := range d.old.Macros {
		if d.new.Macro(m.Name) == nil {
			d.report("macro %s is no longer defined", m.Name)
		}
	}
}

func macroValue(d *diff) {
	for _, m := range d.old.Macros {
		n := d.new.Macro(m.Name)
		if m.Kind != ir.MacroInteger || n == nil {
			continue
		}
		if a, b := m.Value, n.Value; a != b {
			d.report("%s is %d, was %d", m.Name, b, a)
		}
	}
}

func functypes(a *ir.API) map[string]*ir.FuncType {
	m := map[string]*ir.FuncType{}
	for _, decl := range a.Decls {
		if f, ok := decl.(*ir.FuncType); ok {
			m[f.Name] = f
		}
	}
	return m
}

func functypeSame(d *diff) {
	news := functypes(d.new)
	for _, name := range sortedKeys(functypes(d.old)) {
		o := functypes(d.old)[name]
		n, ok := news[name]
		switch {
		case !ok:
			d.report("function-pointer type %s is gone", name)
		case n.Sig.C("(*)") != o.Sig.C("(*)"):
			d.report("%s is %s, was %s", name, n.Sig.C("(*)"), o.Sig.C("(*)"))
		}
	}
}

func additions(d *diff) {
	olds := map[string]bool{}
	for _, decl := range d.old.Decls {
		olds[decl.DeclName()] = true
	}
	for _, decl := range d.new.Decls {
		if _, group := decl.(*ir.Flags); !group && !olds[decl.DeclName()] { // bits are reported one by one
			d.report("new %s", decl.DeclName())
		}
	}
	oldEnums := enums(d.old)
	for _, e := range d.new.Enums() {
		if oe := oldEnums[e.Name]; oe != nil {
			had := map[string]bool{}
			for _, v := range oe.Values {
				had[v.Name] = true
			}
			for _, v := range e.Values {
				if !had[v.Name] {
					d.report("new %s = %d", v.Name, v.Value)
				}
			}
		}
	}
	d.pairs(func(o, n *ir.Struct) {
		of := fields(o)
		for _, f := range n.Fields {
			if of[f.Name] == nil {
				d.report("new field %s.%s", n.Name, f.Name)
			}
		}
	})
	for _, m := range d.new.Macros {
		if d.old.Macro(m.Name) == nil {
			d.report("new macro %s", m.Name)
		}
	}
	oldBits := flagBits(d.old)
	for _, name := range sortedKeys(flagBits(d.new)) {
		if _, ok := oldBits[name]; !ok {
			d.report("new flag %s", name)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
