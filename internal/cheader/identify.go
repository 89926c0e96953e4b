package cheader

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dlgen/dlgen/internal/ir"
)

// Finding is one difference between a header and dlgen's declarations of
// a release: what differs ("macro DLPACK_MINOR_VERSION", "field
// DLTensor.shape") and how.
type Finding struct {
	What, How string // what differs, and how
}

// String is the finding as dlgen -identify prints it: "What: How".
func (f Finding) String() string { return f.What + ": " + f.How }

// Report is the release a header matches and how it differs from it.
type Report struct {
	Header   string     // the header's name (Header.Name)
	Release  ir.Version // the release it matches best
	Findings []Finding  // how it differs from that release; none for a match
}

// String renders the report as dlgen -identify prints it: a line naming
// the release, then one line per difference.
func (r Report) String() string {
	var b strings.Builder
	if len(r.Findings) == 0 {
		fmt.Fprintf(&b, "%s: DLPack %s, as dlgen declares it\n", r.Header, r.Release.Title())
		return b.String()
	}
	fmt.Fprintf(&b, "%s: DLPack %s, with %d difference%s from dlgen's declarations of %s:\n",
		r.Header, r.Release.Title(), len(r.Findings), plural(len(r.Findings)), short(r.Release))
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "  %s\n", f)
	}
	return b.String()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// short names a release in a finding: v1.3, or main.
func short(v ir.Version) string {
	if v.Main {
		return v.String()
	}
	return "v" + v.String()
}

// Identify finds the release of s that h differs least from and how it
// differs. On a tie it prefers the release whose version macros h has,
// then the one nearest to the version h says it is, then the oldest.
func Identify(s *ir.Schema, h *Header) Report {
	var best Report
	bestScore, bestDistance := -1, 0
	claimed, claims := h.Release()
	for _, r := range s.Releases {
		f := Compare(s, r.Version, h)
		score := 2 * len(f)
		for _, x := range f {
			if versionMacro(s.At(r.Version), x) {
				score++
			}
		}
		distance := 0
		if claims == nil {
			distance = abs(1000*(r.Version.Major-claimed.Major) + r.Version.Minor - claimed.Minor)
		}
		if bestScore < 0 || score < bestScore || score == bestScore && distance < bestDistance {
			best, bestScore, bestDistance = Report{Header: h.Name, Release: r.Version, Findings: f}, score, distance
		}
	}
	return best
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// versionMacro reports whether f is about a macro that tells the release.
func versionMacro(api *ir.API, f Finding) bool {
	for _, m := range []*ir.Macro{api.Versions.Major, api.Versions.Minor, api.Versions.Version} {
		if m != nil && f.What == "macro "+m.Name {
			return true
		}
	}
	return false
}

// Compare lists every difference of h from dlgen's declarations of
// release v of s: macros and their values, enums and enumerators, structs
// with their typedefs, tags, fields and field types, function-pointer
// typedefs, and the layout of every struct on each data model of ir.ABIs.
// Parameter names and the order of declarations are not compared.
func Compare(s *ir.Schema, v ir.Version, h *Header) []Finding {
	c := &comparison{s: s, v: v, api: s.At(v), h: h}
	c.macros()
	c.declarations()
	return c.out
}

type comparison struct {
	s   *ir.Schema
	v   ir.Version
	api *ir.API
	h   *Header
	out []Finding
}

func (c *comparison) add(what, format string, args ...any) {
	c.out = append(c.out, Finding{What: what, How: fmt.Sprintf(format, args...)})
}

// macros compares the macros: the version macros and the other value
// macros by value, the flag bits by value, DLPACK_EXTERN_C, DLPACK_DLL
// and the include guard by being defined.
func (c *comparison) macros() {
	type want struct {
		name    string
		value   int64
		integer bool
	}
	var wants []want
	wants = append(wants, want{name: c.api.HeaderGuard})
	for _, m := range c.api.Macros {
		wants = append(wants, want{m.Name, m.Value, m.Kind == ir.MacroInteger})
	}
	for _, d := range c.api.Decls {
		if f, ok := d.(*ir.Flags); ok {
			for _, b := range f.Bits {
				wants = append(wants, want{b.Name, 1 << b.Bit, true})
			}
		}
	}
	known := map[string]bool{}
	for _, w := range wants {
		known[w.name] = true
		m := c.h.Macro(w.name)
		switch {
		case m == nil:
			c.add("macro "+w.name, "missing; %s defines it", short(c.v))
		case w.integer && !m.Integer:
			c.add("macro "+w.name, "defined as %q, not as an integer; %s defines it as %d", m.Text, short(c.v), w.value)
		case w.integer && m.Value != w.value:
			c.add("macro "+w.name, "%d; %s defines it as %d", m.Value, short(c.v), w.value)
		}
	}
	for _, m := range c.h.Macros {
		if !known[m.Name] {
			c.add("macro "+m.Name, "defined%s, not in %s%s", valueOf(m), short(c.v), c.elsewhere(c.lifeOfMacro(m.Name)))
		}
	}
}

func valueOf(m *Macro) string {
	if m.Integer {
		return fmt.Sprintf(" as %d", m.Value)
	}
	return ""
}

func (c *comparison) declarations() {
	known := map[string]bool{}
	for _, d := range c.api.Decls {
		known[d.DeclName()] = true
		switch d := d.(type) {
		case *ir.Enum:
			c.enum(d)
		case *ir.Struct:
			if d.Tag != "" {
				known[d.Tag] = true
			}
			c.structure(d)
		case *ir.FuncType:
			c.function(d)
		}
	}
	for _, e := range c.h.Enums {
		if !known[e.Name] {
			c.add("enum "+e.Name, "declared, not in %s%s", short(c.v), c.elsewhere(c.lifeOfDecl(e.Name)))
		}
	}
	for _, st := range c.h.Structs {
		if !known[st.Name()] && !known[st.Tag] {
			c.add("struct "+st.Name(), "declared, not in %s%s", short(c.v), c.elsewhere(c.lifeOfDecl(st.Name())))
		}
	}
	for _, f := range c.h.Funcs {
		if !known[f.Name] {
			c.add("functype "+f.Name, "declared, not in %s%s", short(c.v), c.elsewhere(c.lifeOfDecl(f.Name)))
		}
	}
	for _, t := range c.h.Typedefs {
		if !known[t] {
			c.add("typedef "+t, "declared, not in %s", short(c.v))
		}
	}
}

func (c *comparison) enum(d *ir.Enum) {
	e := c.h.Enum(d.Name)
	if e == nil {
		c.add("enum "+d.Name, "missing; %s declares it", short(c.v))
		return
	}
	have := map[string]int64{}
	for _, ev := range e.Values {
		have[ev.Name] = ev.Value
	}
	want := map[string]bool{}
	for _, ev := range d.Values {
		want[ev.Name] = true
		value, ok := have[ev.Name]
		switch {
		case !ok:
			c.add("enumerator "+d.Name+"."+ev.Name, "missing; %s has it, = %d", short(c.v), ev.Value)
		case value != ev.Value:
			c.add("enumerator "+d.Name+"."+ev.Name, "%d; %s has it = %d", value, short(c.v), ev.Value)
		}
	}
	for _, ev := range e.Values {
		if !want[ev.Name] {
			c.add("enumerator "+d.Name+"."+ev.Name, "= %d, not in %s%s", ev.Value, short(c.v), c.elsewhere(c.lifeOfEnumerator(d.Name, ev.Name)))
		}
	}
}

func (c *comparison) structure(d *ir.Struct) {
	st := c.h.Struct(d.Name)
	if st == nil && d.Tag != "" {
		for _, x := range c.h.Structs {
			if x.Tag == d.Tag {
				st = x
			}
		}
	}
	if st == nil {
		c.add("struct "+d.Name, "missing; %s declares it", short(c.v))
		return
	}
	switch typedef := d.Typedef(c.v); {
	case typedef && st.Typedef != d.Name:
		c.add("typedef "+d.Name, "missing (only struct %s is declared); %s declares the type name", st.Tag, short(c.v))
	case !typedef && st.Typedef == d.Name:
		how := fmt.Sprintf("declared; %s declares only struct %s", short(c.v), d.Tag)
		if d.TypedefSince != nil {
			how += fmt.Sprintf(" (the typedef arrived in %s; dlgen's header backports it where a repeated typedef is legal, see DLGEN_BACKPORTS)", short(*d.TypedefSince))
		}
		c.add("typedef "+d.Name, "%s", how)
	}
	if st.Tag != d.Tag {
		c.add("struct "+d.Name, "tag %s; %s gives it %s", tagText(st.Tag), short(c.v), tagText(d.Tag))
	}
	var haveNames, wantNames []string
	have := map[string]*Field{}
	for _, f := range st.Fields {
		haveNames = append(haveNames, f.Name)
		have[f.Name] = f
	}
	for _, f := range d.Fields {
		wantNames = append(wantNames, f.Name)
	}
	if strings.Join(haveNames, ",") != strings.Join(wantNames, ",") {
		c.add("struct "+d.Name, "fields %s; %s has %s", strings.Join(haveNames, ", "), short(c.v), strings.Join(wantNames, ", "))
	}
	for _, f := range d.Fields {
		if hf := have[f.Name]; hf != nil && Spell(hf.Type) != Spell(f.Type) {
			c.add("field "+d.Name+"."+f.Name, "type %s; %s has %s", Spell(hf.Type), short(c.v), Spell(f.Type))
		}
	}
	for _, abi := range ir.ABIs {
		want, got := abi.Layout(d), st.Layouts[abi.Name]
		if got.Size != want.Size {
			c.add("struct "+d.Name, "size %d on %s; %s has %d", got.Size, abi.Name, short(c.v), want.Size)
		}
		if got.Align != want.Align {
			c.add("struct "+d.Name, "alignment %d on %s; %s has %d", got.Align, abi.Name, short(c.v), want.Align)
		}
		offsets := map[string]int{}
		for _, f := range got.Fields {
			offsets[f.Name] = f.Offset
		}
		for _, f := range want.Fields {
			if off, ok := offsets[f.Name]; ok && off != f.Offset {
				c.add("field "+d.Name+"."+f.Name, "offset %d on %s; %s has %d", off, abi.Name, short(c.v), f.Offset)
			}
		}
	}
}

func tagText(tag string) string {
	if tag == "" {
		return "none"
	}
	return tag
}

func (c *comparison) function(d *ir.FuncType) {
	f := c.h.Func(d.Name)
	switch {
	case f == nil && slices.Contains(c.h.Typedefs, d.Name):
		c.add("functype "+d.Name, "a typedef of another type; %s declares it a pointer to function", short(c.v))
		return
	case f == nil:
		c.add("functype "+d.Name, "missing; %s declares it", short(c.v))
		return
	}
	have, want := Spell(&ir.Type{Kind: ir.Func, Sig: f.Sig}), Spell(&ir.Type{Kind: ir.Func, Sig: d.Sig})
	if have != want {
		c.add("functype "+d.Name, "%s; %s has %s", have, short(c.v), want)
	}
}

// Spell writes t as C without parameter names, which are not part of a
// type: "const int64_t*", "void (*)(struct DLManagedTensor*)".
func Spell(t *ir.Type) string { return unnamed(t).C("") }

func unnamed(t *ir.Type) *ir.Type {
	c := *t
	if t.Elem != nil {
		c.Elem = unnamed(t.Elem)
	}
	if t.Sig != nil {
		c.Sig = &ir.Signature{Returns: unnamed(t.Sig.Returns)}
		for _, p := range t.Sig.Params {
			c.Sig.Params = append(c.Sig.Params, &ir.Param{Type: unnamed(p.Type)})
		}
	}
	return &c
}

// elsewhere says in which releases dlgen has an element that is not in
// the compared one.
func (c *comparison) elsewhere(life *ir.Life, note string) string {
	if life == nil {
		return " (unknown to dlgen)"
	}
	if note != "" {
		return " (" + note + ")"
	}
	if life.Until == nil {
		return " (dlgen has it from " + short(life.Since) + ")"
	}
	last := life.Since
	for _, r := range c.s.Releases {
		if life.In(r.Version) {
			last = r.Version
		}
	}
	if last == life.Since {
		return " (dlgen has it in " + short(last) + ")"
	}
	return " (dlgen has it in " + short(life.Since) + " to " + short(last) + ")"
}

func (c *comparison) lifeOfMacro(name string) (*ir.Life, string) {
	for _, m := range c.s.Macros {
		if m.Name == name {
			return &m.Life, ""
		}
	}
	if b := flagBit(c.s.Decls, name); b != nil {
		return &b.Life, ""
	}
	return nil, ""
}

func (c *comparison) lifeOfDecl(name string) (*ir.Life, string) {
	for _, d := range c.s.Decls {
		if d.DeclName() == name {
			l := d.DeclLife()
			return &l, ""
		}
	}
	return nil, ""
}

func (c *comparison) lifeOfEnumerator(enum, name string) (*ir.Life, string) {
	for _, d := range c.s.Decls {
		if e, ok := d.(*ir.Enum); ok && e.Name == enum {
			for _, ev := range e.Values {
				switch {
				case ev.Name == name:
					return &ev.Life, ""
				case ev.Renamed != nil && ev.Renamed.From == name:
					return &ev.Life, fmt.Sprintf("dlgen spells it %s from %s", ev.Name, short(ev.Renamed.In))
				}
			}
		}
	}
	return nil, ""
}
