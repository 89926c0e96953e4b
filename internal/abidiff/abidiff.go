// Package abidiff compares two releases of the schema and reports what a
// binding must change, as findings of named rules in the manner of buf's
// breaking-change checks. Rules are data: each has an ID, a category and a
// purpose, and one function that reports its findings.
//
// Category ABI means compiled code that assumed the older release would
// misread memory or values; API means source written against the older
// release no longer compiles or means something else; INFO is a change
// that breaks nothing (an addition, a new macro value). RULE is a change
// of the protocol's rules: tensors one side made under the older release
// are wrong under the newer one (strides may no longer be NULL).
package abidiff

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dlgen/dlgen/internal/ir"
)

// Category says how serious a finding is.
type Category string

const (
	ABI        Category = "ABI"  // compiled code built for the older release misreads memory or values
	API        Category = "API"  // source written for the older release no longer compiles or means something else
	RuleChange Category = "RULE" // a rule of the protocol changes: producers or consumers written for the older release break it
	Info       Category = "INFO" // breaks nothing: an addition, a new macro value
)

// Rule is one check.
type Rule struct {
	ID       string   // the rule's name in reports, such as FIELD_OFFSET_SAME
	Category Category // how serious each of its findings is
	Purpose  string   // what the rule checks, in a line
	check    func(d *diff)
}

// Finding is one rule's report about one element.
type Finding struct {
	Rule     string   // the ID of the rule that reports it
	Category Category // the rule's category
	Message  string   // the element and what changed
}

// String is the finding as reports print it: "ABI FIELD_OFFSET_SAME: message".
func (f Finding) String() string { return fmt.Sprintf("%s %s: %s", f.Category, f.Rule, f.Message) }

// Breaking reports whether the finding is an ABI or API break.
func (f Finding) Breaking() bool { return f.Category != Info }

// Rules are every check, in report order. Each change of the schema is
// reported once, by the rule about the element it changes: a renumbered
// enumerator is ENUM_VALUE_SAME only, a renamed one ENUM_VALUE_NAME_SAME
// only, a deleted enum ENUM_NO_DELETE only. A change that moves other
// elements (a wider field moves the fields after it and grows every struct
// that holds it) is also reported for each element it moves, once for all
// data models.
var Rules = []Rule{
	{"STRUCT_NO_DELETE", ABI, "a struct of the old release still exists", structNoDelete},
	{"STRUCT_SIZE_SAME", ABI, "a struct has the same size on every data model", structSizeSame},
	{"FIELD_NO_DELETE", ABI, "a field of the old release still exists", fieldNoDelete},
	{"FIELD_OFFSET_SAME", ABI, "a field has the same offset and size on every data model", fieldOffsetSame},
	{"FIELD_TYPE_SAME", API, "a field keeps its C type (a retype that changes the layout is FIELD_OFFSET_SAME's)", fieldTypeSame},
	{"TYPEDEF_NO_DELETE", API, "a struct named by a typedef in the old release still is", typedefNoDelete},
	{"ENUM_NO_DELETE", ABI, "an enum of the old release still exists", enumNoDelete},
	{"ENUM_VALUE_NO_DELETE", ABI, "an enumerator of the old release still exists, by name or by value", enumValueNoDelete},
	{"ENUM_VALUE_SAME", ABI, "an enumerator keeps its value", enumValueSame},
	{"ENUM_VALUE_NAME_SAME", API, "a value keeps its enumerator name", enumValueNameSame},
	{"FLAG_NO_DELETE", ABI, "a flag of the old release still exists", flagNoDelete},
	{"FLAG_BIT_SAME", ABI, "a flag keeps its bit", flagBitSame},
	{"MACRO_NO_DELETE", API, "a macro of the old release is still defined", macroNoDelete},
	{"FUNCTYPE_NO_DELETE", API, "a function-pointer typedef of the old release still exists", functypeNoDelete},
	{"FUNCTYPE_SAME", ABI, "a function-pointer type keeps its signature", functypeSame},
	{"FIELD_NULLABLE_SAME", RuleChange, "a pointer field may be NULL in the same tensors", fieldNullableSame},
	{"ADDITION", Info, "what the new release adds (a renamed enumerator is not an addition)", additions},
	{"MACRO_VALUE", Info, "a macro's value changes (version numbers do, every release)", macroValue},
}

type diff struct {
	old, new             *ir.API
	oldLayout, newLayout layouts
	rule                 Rule
	findings             []Finding
}

// layouts are a release's layout checks on every data model, by data
// model, struct and field ("" for the struct's size).
type layouts map[[3]string]ir.LayoutCheck

func layoutsOf(a *ir.API) layouts {
	m := layouts{}
	for _, abi := range ir.ABIs {
		for _, c := range a.LayoutChecks(abi) {
			field := ""
			if c.Field != nil {
				field = c.Field.Name
			}
			m[[3]string{abi.Name, c.Struct.Name, field}] = c
		}
	}
	return m
}

func (d *diff) report(format string, args ...any) {
	d.findings = append(d.findings, Finding{Rule: d.rule.ID, Category: d.rule.Category, Message: fmt.Sprintf(format, args...)})
}

// Compare runs every rule from old to new.
func Compare(old, new *ir.API) []Finding {
	d := &diff{old: old, new: new, oldLayout: layoutsOf(old), newLayout: layoutsOf(new)}
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

// byModel says how something differs on each data model of ir.ABIs, in
// one phrase: "NEW, was OLD, on every data model", or "NEW, was OLD, on A
// and B; NEW2, was OLD2, on C" for groups of models that differ alike. It
// is "" when no model differs.
func byModel(describe func(abi ir.ABI) (old, new string)) string {
	type change struct{ old, new string }
	var order []change
	models := map[change][]string{}
	for _, abi := range ir.ABIs {
		o, n := describe(abi)
		if o == n {
			continue
		}
		c := change{o, n}
		if models[c] == nil {
			order = append(order, c)
		}
		models[c] = append(models[c], abi.Name)
	}
	var parts []string
	for _, c := range order {
		where := strings.Join(models[c], " and ")
		if len(order) == 1 && len(models[c]) == len(ir.ABIs) {
			where = "every data model"
		}
		parts = append(parts, fmt.Sprintf("%s, was %s, on %s", c.new, c.old, where))
	}
	return strings.Join(parts, "; ")
}

func structSizeSame(d *diff) {
	d.pairs(func(o, n *ir.Struct) {
		change := byModel(func(abi ir.ABI) (string, string) {
			return fmt.Sprintf("%d bytes", d.oldLayout[[3]string{abi.Name, o.Name, ""}].Size),
				fmt.Sprintf("%d bytes", d.newLayout[[3]string{abi.Name, n.Name, ""}].Size)
		})
		if change != "" {
			d.report("%s is %s", o.Name, change)
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

// field is where field name of struct s lies on abi, "" if s lacks it.
func (l layouts) field(abi ir.ABI, s, name string) string {
	if c, ok := l[[3]string{abi.Name, s, name}]; ok {
		return fmt.Sprintf("at %d (%d bytes)", c.Offset, c.Size)
	}
	return ""
}

// moved describes how field name, present in both o and n, moved or
// changed size; "" if it did on no data model.
func (d *diff) moved(o, n *ir.Struct, name string) string {
	return byModel(func(abi ir.ABI) (string, string) {
		return d.oldLayout.field(abi, o.Name, name), d.newLayout.field(abi, n.Name, name)
	})
}

func fieldOffsetSame(d *diff) {
	d.pairs(func(o, n *ir.Struct) {
		nf := fields(n)
		for _, f := range o.Fields {
			g := nf[f.Name]
			if g == nil {
				continue
			}
			change := d.moved(o, n, f.Name)
			switch {
			case change == "":
			case g.Type.C("") != f.Type.C(""):
				d.report("%s.%s, now %s (was %s), is %s", o.Name, f.Name, g.Type.C(""), f.Type.C(""), change)
			default:
				d.report("%s.%s is %s", o.Name, f.Name, change)
			}
		}
	})
}

func typedefNoDelete(d *diff) {
	d.pairs(func(o, n *ir.Struct) {
		if o.Typedef(d.old.Version()) && !n.Typedef(d.new.Version()) {
			d.report("%s is no longer a typedef; spell it struct %s", o.Name, n.Tag)
		}
	})
}

func fieldTypeSame(d *diff) {
	d.pairs(func(o, n *ir.Struct) {
		nf := fields(n)
		for _, f := range o.Fields {
			if g := nf[f.Name]; g != nil && g.Type.C("") != f.Type.C("") && d.moved(o, n, f.Name) == "" {
				d.report("%s.%s is %s, was %s", o.Name, f.Name, g.Type.C(""), f.Type.C(""))
			}
		}
	})
}

// nullWhen is when a field may be NULL in tensors of release v.
func nullWhen(f *ir.Field, v ir.Version) ir.NullWhen {
	if c := f.Nullable.Changed; c != nil && v.Less(c.In) {
		return c.From
	}
	return f.Nullable.When
}

// nullWhenText says when a pointer may be NULL, for findings.
var nullWhenText = map[ir.NullWhen]string{
	ir.NullNever: "in no tensor", ir.NullAlways: "in any tensor",
	ir.NullIfNdimZero: "only when ndim is 0", ir.NullIfNoElements: "only when the tensor has no elements",
}

// allows reports whether NULL under a is allowed wherever it is under b.
func allows(a, b ir.NullWhen) bool {
	return a == b || a == ir.NullAlways || b == ir.NullNever
}

func fieldNullableSame(d *diff) {
	ov, nv := d.old.Version(), d.new.Version()
	d.pairs(func(o, n *ir.Struct) {
		nf := fields(n)
		for _, f := range o.Fields {
			g := nf[f.Name]
			if g == nil {
				continue
			}
			was, is := nullWhen(f, ov), nullWhen(g, nv)
			if was == is {
				continue
			}
			who := "producers must set it where they left it NULL"
			if allows(is, was) {
				who = "consumers must accept NULL where it was refused"
			}
			d.report("%s.%s may be NULL %s, was %s: %s", o.Name, f.Name, nullWhenText[is], nullWhenText[was], who)
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

func enumNoDelete(d *diff) {
	news := enums(d.new)
	for _, o := range d.old.Enums() {
		if news[o.Name] == nil {
			d.report("enum %s is gone", o.Name)
		}
	}
}

// enumerator is what became of an enumerator of the old release: the
// new one of its name, else the new one of its value (a rename), else
// nil (deleted).
type enumerator struct {
	old, byName, byValue *ir.Enumerator
}

// enumerators calls f for every enumerator of every enum present in both
// releases.
func (d *diff) enumerators(f func(e *ir.Enum, x enumerator)) {
	news := enums(d.new)
	for _, o := range d.old.Enums() {
		n := news[o.Name]
		if n == nil {
			continue
		}
		byValue, byName := map[int64]*ir.Enumerator{}, map[string]*ir.Enumerator{}
		for _, e := range n.Values {
			byValue[e.Value], byName[e.Name] = e, e
		}
		for _, e := range o.Values {
			x := enumerator{old: e, byName: byName[e.Name]}
			if x.byName == nil {
				x.byValue = byValue[e.Value]
			}
			f(o, x)
		}
	}
}

func enumValueNoDelete(d *diff) {
	d.enumerators(func(o *ir.Enum, x enumerator) {
		if x.byName == nil && x.byValue == nil {
			d.report("%s value %d (%s) is gone", o.Name, x.old.Value, x.old.Name)
		}
	})
}

func enumValueSame(d *diff) {
	d.enumerators(func(_ *ir.Enum, x enumerator) {
		if x.byName != nil && x.byName.Value != x.old.Value {
			d.report("%s is %d, was %d", x.old.Name, x.byName.Value, x.old.Value)
		}
	})
}

func enumValueNameSame(d *diff) {
	d.enumerators(func(o *ir.Enum, x enumerator) {
		if x.byValue != nil {
			d.report("%s value %d is named %s, was %s", o.Name, x.old.Value, x.byValue.Name, x.old.Name)
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

func flagNoDelete(d *diff) {
	news := flagBits(d.new)
	for _, name := range sortedKeys(flagBits(d.old)) {
		if _, ok := news[name]; !ok {
			d.report("flag %s is gone", name)
		}
	}
}

func flagBitSame(d *diff) {
	news := flagBits(d.new)
	olds := flagBits(d.old)
	for _, name := range sortedKeys(olds) {
		if nb, ok := news[name]; ok && nb != olds[name] {
			d.report("flag %s is bit %d, was %d", name, nb, olds[name])
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

func functypeNoDelete(d *diff) {
	news := functypes(d.new)
	for _, name := range sortedKeys(functypes(d.old)) {
		if news[name] == nil {
			d.report("function-pointer type %s is gone", name)
		}
	}
}

func functypeSame(d *diff) {
	news := functypes(d.new)
	olds := functypes(d.old)
	for _, name := range sortedKeys(olds) {
		o, n := olds[name], news[name]
		if n != nil && n.Sig.C("(*)") != o.Sig.C("(*)") {
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
	d.pairs(func(o, n *ir.Struct) {
		if !o.Typedef(d.old.Version()) && n.Typedef(d.new.Version()) {
			d.report("new typedef %s for struct %s", n.Name, n.Tag)
		}
	})
	renamedTo := map[*ir.Enumerator]bool{} // ENUM_VALUE_NAME_SAME's
	d.enumerators(func(_ *ir.Enum, x enumerator) {
		if x.byValue != nil {
			renamedTo[x.byValue] = true
		}
	})
	oldEnums := enums(d.old)
	for _, e := range d.new.Enums() {
		if oe := oldEnums[e.Name]; oe != nil {
			had := map[string]bool{}
			for _, v := range oe.Values {
				had[v.Name] = true
			}
			for _, v := range e.Values {
				if !had[v.Name] && !renamedTo[v] {
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
