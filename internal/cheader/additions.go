package cheader

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/dlgen/dlgen/internal/ir"
	"gopkg.in/yaml.v3"
)

// Release is the release h says it is, by its version macros
// (DLPACK_MAJOR_VERSION and DLPACK_MINOR_VERSION, or DLPACK_VERSION before
// 1.0).
func (h *Header) Release() (ir.Version, error) {
	major, minor := h.Macro("DLPACK_MAJOR_VERSION"), h.Macro("DLPACK_MINOR_VERSION")
	if major != nil && minor != nil && major.Integer && minor.Integer {
		return ir.Version{Major: int(major.Value), Minor: int(minor.Value)}, nil
	}
	if v := h.Macro("DLPACK_VERSION"); v != nil && v.Integer {
		return ir.Version{Major: int(v.Value / 100), Minor: int(v.Value % 100 / 10)}, nil
	}
	return ir.Version{}, fmt.Errorf("%s defines no version macros (DLPACK_MAJOR_VERSION and DLPACK_MINOR_VERSION, or DLPACK_VERSION)", h.Name)
}

// Additions writes, as schema YAML, what h declares that the newest release
// of s lacks (main, when s lists it): the new release, new macro values,
// macros, flag bits, enumerators, enums, struct fields, structs, typedefs
// of structs and function-pointer typedefs, each with since set to the
// release h says it is, or to main when h carries the version numbers of
// the schema's newest release. An entry that names an element the schema
// has (a macro, enum, flags group or struct) adds its lists and keys to
// that element; the others are new elements, to add at the end of their
// list. Docs are left to the maintainer, and what h changes or removes is
// not an addition: dlgen -identify lists it.
func Additions(s *ir.Schema, h *Header) ([]byte, error) {
	hv, err := h.Release()
	if err != nil {
		return nil, err
	}
	base := s.Latest()
	numbers := ir.Version{Major: base.Major, Minor: base.Minor}
	since, newRelease := hv, true
	switch {
	case hv.Less(numbers):
		return nil, fmt.Errorf("%s is DLPack %s, older than the schema's newest release %s", h.Name, hv, base)
	case hv == numbers:
		since, newRelease = ir.Version{Major: hv.Major, Minor: hv.Minor, Main: true}, !base.Main
	}
	a := &additions{s: s, api: s.At(base), h: h, since: since}
	if newRelease {
		entry := mapping(false, "version", version(since))
		if since.Main {
			entry.Content[1].LineComment = "add commit: the dmlc/dlpack commit this header is from"
		}
		a.versions = append(a.versions, entry)
	}
	a.macros()
	a.declarations()

	doc := mapping(false)
	for _, list := range []struct {
		key   string
		items []*yaml.Node
	}{{"versions", a.versions}, {"macros", a.macroNodes}, {"declarations", a.decls}} {
		if len(list.items) > 0 {
			doc.Content = append(doc.Content, scalar(list.key), &yaml.Node{Kind: yaml.SequenceNode, Content: list.items})
		}
	}
	doc.HeadComment = fmt.Sprintf("What %s declares beyond the schema's newest release, %s, as DLPack %s.\n"+
		"Merge each entry into the schema: an entry naming an element the schema has\n"+
		"adds its lists and keys to it; any other is a new element, added at the end\n"+
		"of its list. Write the docs. dlgen -identify lists what the header changes\n"+
		"or removes, which are no additions.", h.Name, base, since)
	if len(doc.Content) == 0 {
		doc.HeadComment += "\nThere is nothing to add."
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	out := buf.Bytes()
	if len(doc.Content) == 0 {
		out = bytes.TrimSuffix(out, []byte("{}\n")) // the comment only
	}
	if !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out, '\n')
	}
	return out, nil
}

type additions struct {
	s                           *ir.Schema
	api                         *ir.API
	h                           *Header
	since                       ir.Version
	versions, macroNodes, decls []*yaml.Node
}

func (a *additions) macros() {
	flags := map[string]*ir.Flags{}
	for _, d := range a.api.Decls {
		if f, ok := d.(*ir.Flags); ok {
			flags[f.Name] = f
		}
	}
	bits := map[string][]*yaml.Node{}
	var groups []string
	for _, m := range a.h.Macros {
		if m.Name == a.api.HeaderGuard {
			continue
		}
		if old := a.api.Macro(m.Name); old != nil {
			if old.Kind == ir.MacroInteger && m.Integer && m.Value != old.Value {
				value := mapping(true, "since", version(a.since), "value", m.Value)
				a.macroNodes = append(a.macroNodes, mapping(false, "name", m.Name, "values", sequence(value)))
			}
			continue
		}
		if a.inRelease(m.Name) || a.known(m.Name) || !m.Integer {
			continue // kept, or not an addition (dlgen -identify tells)
		}
		if g := flagsGroup(flags, m.Name); g != nil && m.Value > 0 && m.Value&(m.Value-1) == 0 {
			bit := 0
			for 1<<bit != m.Value {
				bit++
			}
			if _, ok := bits[g.Name]; !ok {
				groups = append(groups, g.Name)
			}
			bits[g.Name] = append(bits[g.Name], mapping(true, "name", m.Name, "bit", int64(bit), "since", version(a.since)))
			continue
		}
		value := mapping(true, "since", version(a.since), "value", m.Value)
		a.macroNodes = append(a.macroNodes, mapping(false, "name", m.Name, "since", version(a.since), "values", sequence(value)))
	}
	for _, g := range groups {
		a.decls = append(a.decls, mapping(false, "flags", g, "bits", sequence(bits[g]...)))
	}
}

// inRelease reports whether name is a flag bit of the compared release.
func (a *additions) inRelease(name string) bool { return flagBit(a.api.Decls, name) != nil }

// known reports whether the schema has a macro or flag called name in some
// other release: the header keeps or revives it, which is no addition.
func (a *additions) known(name string) bool {
	for _, m := range a.s.Macros {
		if m.Name == name {
			return true
		}
	}
	return flagBit(a.s.Decls, name) != nil
}

// flagBit is the flag bit called name among decls, or nil.
func flagBit(decls []ir.Decl, name string) *ir.Flag {
	for _, d := range decls {
		if f, ok := d.(*ir.Flags); ok {
			for _, b := range f.Bits {
				if b.Name == name {
					return b
				}
			}
		}
	}
	return nil
}

// flagsGroup is the flags group whose bits name shares the prefix of.
func flagsGroup(flags map[string]*ir.Flags, name string) *ir.Flags {
	names := make([]string, 0, len(flags))
	for n := range flags {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if strings.HasPrefix(name, n+"_") {
			return flags[n]
		}
	}
	return nil
}

func (a *additions) declarations() {
	known := map[string]bool{}
	for _, d := range a.s.Decls {
		known[d.DeclName()] = true
		if st, ok := d.(*ir.Struct); ok && st.Tag != "" {
			known[st.Tag] = true
		}
	}
	for _, d := range a.api.Decls {
		switch d := d.(type) {
		case *ir.Enum:
			if e := a.h.Enum(d.Name); e != nil {
				if values := a.newEnumerators(d, e); len(values) > 0 {
					a.decls = append(a.decls, mapping(false, "enum", d.Name, "values", sequence(values...)))
				}
			}
		case *ir.Struct:
			a.structAdditions(d)
		}
	}
	// Whole new declarations, in the header's order, which declares what
	// a declaration uses before it.
	for _, name := range a.h.Order {
		if known[name] {
			continue
		}
		if e := a.h.Enum(name); e != nil {
			storage := scalar("int32_t")
			storage.LineComment = "C cannot tell: the type its values are kept in, and C++'s base (cxx_base) if fixed"
			a.decls = append(a.decls, mapping(false, "enum", e.Name, "since", version(a.since), "storage", storage,
				"values", sequence(a.newEnumerators(nil, e)...)))
		}
		if st := a.h.Struct(name); st != nil && !known[st.Tag] {
			entry := mapping(false, "struct", st.Name(), "since", version(a.since))
			if st.Tag != "" {
				entry.Content = append(entry.Content, scalar("tag"), scalar(st.Tag))
			}
			if st.Typedef == "" {
				entry.HeadComment = "declared by its tag only, which the schema cannot say of a new struct"
			}
			entry.Content = append(entry.Content, scalar("fields"), sequence(a.fields(st.Fields)...))
			a.decls = append(a.decls, entry)
		}
		if f := a.h.Func(name); f != nil {
			entry := mapping(false, "functype", f.Name, "since", version(a.since))
			entry.Content = append(entry.Content, signatureNodes(f.Sig)...)
			a.decls = append(a.decls, entry)
		}
	}
}

// newEnumerators lists the enumerators of e that d (nil: a new enum)
// lacks and the schema knows nowhere else.
func (a *additions) newEnumerators(d *ir.Enum, e *Enum) []*yaml.Node {
	have := map[string]bool{}
	if d != nil {
		for _, sd := range a.s.Decls {
			if se, ok := sd.(*ir.Enum); ok && se.Name == d.Name {
				for _, ev := range se.Values {
					have[ev.Name] = true
					if ev.Renamed != nil {
						have[ev.Renamed.From] = true
					}
				}
			}
		}
	}
	var out []*yaml.Node
	for _, ev := range e.Values {
		if !have[ev.Name] {
			out = append(out, mapping(true, "name", ev.Name, "value", ev.Value, "since", version(a.since)))
		}
	}
	return out
}

// structAdditions lists what the header adds to struct d: its typedef, and
// fields after the last one d has.
func (a *additions) structAdditions(d *ir.Struct) {
	st := a.h.Struct(d.Name)
	if st == nil {
		return
	}
	entry := mapping(false, "struct", d.Name)
	if !d.Typedef(a.api.Version()) && st.Typedef == d.Name {
		entry.Content = append(entry.Content, scalar("typedef_since"), scalar(version(a.since)))
	}
	if n := len(d.Fields); len(st.Fields) > n && a.sameFields(d, st.Fields[:n]) {
		entry.Content = append(entry.Content, scalar("fields"), sequence(a.fields(st.Fields[n:])...))
	}
	if len(entry.Content) > 2 {
		a.decls = append(a.decls, entry)
	}
}

func (a *additions) sameFields(d *ir.Struct, fields []*Field) bool {
	for i, f := range d.Fields {
		if fields[i].Name != f.Name || Spell(fields[i].Type) != Spell(f.Type) {
			return false
		}
	}
	return true
}

func (a *additions) fields(fields []*Field) []*yaml.Node {
	var out []*yaml.Node
	for _, f := range fields {
		if f.Type.Kind == ir.Func {
			typ := mapping(false)
			typ.Content = signatureNodes(f.Type.Sig)
			out = append(out, mapping(false, "name", f.Name, "type", typ, "since", version(a.since)))
			continue
		}
		out = append(out, mapping(true, "name", f.Name, "type", f.Type.C(""), "since", version(a.since)))
	}
	return out
}

// signatureNodes are the returns and params keys of a function type.
func signatureNodes(sig *ir.Signature) []*yaml.Node {
	nodes := []*yaml.Node{scalar("returns"), scalar(sig.Returns.C(""))}
	if len(sig.Params) == 0 {
		return nodes
	}
	var params []*yaml.Node
	for i, p := range sig.Params {
		name := p.Name
		if name == "" {
			name = fmt.Sprintf("arg%d", i) // the header names none; the schema needs one
		}
		if p.Type.Kind == ir.Func {
			typ := mapping(false)
			typ.Content = signatureNodes(p.Type.Sig)
			params = append(params, mapping(false, "name", name, "type", typ))
			continue
		}
		params = append(params, mapping(true, "name", name, "type", p.Type.C("")))
	}
	return append(nodes, scalar("params"), sequence(params...))
}

// version spells v as the schema does: quoted numbers, bare main.
func version(v ir.Version) string { return v.String() }

func scalar(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Value: s, Tag: "!!str"}
	if _, err := strconv.ParseFloat(s, 64); err == nil && strings.Contains(s, ".") {
		n.Style = yaml.DoubleQuotedStyle // a release number, never a float
	}
	return n
}

// mapping builds a mapping of key, value pairs; a value is a node, a
// string or an int64. Flow mappings are written on one line, as the schema
// writes short entries.
func mapping(flow bool, kv ...any) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	if flow {
		n.Style = yaml.FlowStyle
	}
	for i := 0; i+1 < len(kv); i += 2 {
		var v *yaml.Node
		switch x := kv[i+1].(type) {
		case *yaml.Node:
			v = x
		case string:
			v = scalar(x)
		case int64:
			v = &yaml.Node{Kind: yaml.ScalarNode, Value: strconv.FormatInt(x, 10), Tag: "!!int"}
		}
		n.Content = append(n.Content, scalar(kv[i].(string)), v)
	}
	return n
}

func sequence(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Content: items}
}
