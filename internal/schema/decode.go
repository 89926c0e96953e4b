package schema

import (
	"fmt"
	"strings"

	"github.com/dlgen/dlgen/internal/ir"
	"gopkg.in/yaml.v3"
)

// releases is filled first so version tags can be range-checked as they
// are read.
type decoder struct {
	*reader
	releases []ir.Version
}

func (r *reader) schema(root *yaml.Node) *ir.Schema {
	if root.Kind != yaml.DocumentNode || len(root.Content) != 1 {
		r.errorf(root, "the schema is empty: it must be one YAML document (name, header_guard, versions, declarations)")
		return nil
	}
	d := &decoder{reader: r}
	m := r.mapping(root.Content[0], "the schema", "name!", "header_guard!", "versions!", "macros", "declarations!", "python", "rules")
	if m == nil {
		return nil
	}
	s := &ir.Schema{
		Name:        r.ident(m["name"], "name", ir.TypeName),
		HeaderGuard: r.ident(m["header_guard"], "header_guard", ir.MacroName),
	}
	for _, n := range r.seq(m["versions"], "versions") {
		vm := r.mapping(n, "a version", "version!", "notes", "commit")
		if vm == nil || vm["version"] == nil {
			continue
		}
		v, ok := d.listed(vm["version"])
		if !ok {
			continue
		}
		r.text(vm["notes"], "notes") // for readers of the schema; no output carries it
		rel := ir.Release{Version: v, Commit: r.str(vm["commit"], "commit"), Pos: r.pos(vm["version"])}
		switch {
		case vm["commit"] != nil && !commitRE.MatchString(rel.Commit):
			r.errorf(vm["commit"], "commit %q is not a git commit id (7 to 40 lowercase hexadecimal digits)", rel.Commit)
		case v.Main && rel.Commit == "":
			r.errorf(n, "the %s release must name the upstream commit its facts were checked against (commit)", ir.MainName)
		}
		d.releases = append(d.releases, v)
		s.Releases = append(s.Releases, rel)
	}
	if m["versions"] != nil && len(s.Releases) == 0 {
		r.errorf(m["versions"], "versions must list at least one release")
	}
	if len(r.errs) > 0 {
		return nil // the rest is checked against the releases
	}
	for _, n := range r.seq(m["macros"], "macros") {
		s.Macros = append(s.Macros, d.macro(n))
	}
	for _, n := range r.seq(m["declarations"], "declarations") {
		if decl := d.decl(n); decl != nil {
			s.Decls = append(s.Decls, decl)
		}
	}
	for _, n := range r.seq(m["python"], "python") {
		if p := d.pythonName(n); p != nil {
			s.Python = append(s.Python, p)
		}
	}
	if m["rules"] != nil {
		s.Rules = d.rules(m["rules"])
	}
	return s
}

// listed reads the version of an entry of versions: a release number
// newer than the one before, or main, numbered as the release before it
// and listed last.
func (d *decoder) listed(n *yaml.Node) (ir.Version, bool) {
	var prev *ir.Version
	if len(d.releases) > 0 {
		prev = &d.releases[len(d.releases)-1]
	}
	switch {
	case prev != nil && prev.Main:
		d.errorf(n, "%s must be the last of the versions", ir.MainName)
		return ir.Version{}, false
	case n.Value == ir.MainName && prev == nil:
		d.errorf(n, "%s cannot be the first of the versions: it carries the version numbers of the release before it", ir.MainName)
		return ir.Version{}, false
	case n.Value == ir.MainName:
		return ir.Version{Major: prev.Major, Minor: prev.Minor, Main: true}, true
	}
	v := d.version(n, "version")
	if prev != nil && !prev.Less(v) {
		d.errorf(n, "versions must be listed oldest first without repeats; %s follows %s", v, prev)
	}
	return v, true
}

func (d *decoder) pythonName(n *yaml.Node) *ir.PythonName {
	m := d.mapping(n, "a python name", "name!", "role!", "since!", "until", "renamed", "doc")
	if m == nil {
		return nil
	}
	p := &ir.PythonName{Name: d.pythonIdent(m["name"], "name"), Doc: d.text(m["doc"], "doc"), Life: d.life(m), Pos: d.pos(n)}
	p.Renamed = d.rename(m["renamed"], p.Life, d.pythonIdent)
	role, ok := readRole(d.reader, m["role"], "python role", ir.PythonRoles())
	if !ok {
		return nil
	}
	p.Role = role
	return p
}

// readRole reads the schema spelling of one of roles.
func readRole[R fmt.Stringer](r *reader, n *yaml.Node, what string, roles []R) (R, bool) {
	s := r.str(n, what)
	names := make([]string, len(roles))
	for i, role := range roles {
		if s == role.String() {
			return role, true
		}
		names[i] = role.String()
	}
	if n != nil && n.Kind == yaml.ScalarNode {
		r.errorf(n, "%s must be one of %s, not %q", what, strings.Join(names, ", "), s)
	}
	var none R
	return none, false
}

// life reads since/until and checks them against the listed releases.
func (d *decoder) life(m map[string]*yaml.Node) ir.Life {
	var l ir.Life
	l.Since = d.release(m["since"], "since")
	if m["until"] != nil {
		u := d.release(m["until"], "until")
		if !l.Since.Less(u) {
			d.errorf(m["until"], "until %s must be later than since %s", u, l.Since)
		}
		l.Until = &u
	}
	return l
}

// release reads a version that must be one of the listed releases.
func (d *decoder) release(n *yaml.Node, what string) ir.Version {
	if n == nil {
		return ir.Version{}
	}
	v := d.version(n, what)
	for _, r := range d.releases {
		if r == v {
			return v
		}
	}
	if len(d.errs) == 0 || d.errs[len(d.errs)-1].Pos != d.pos(n) {
		d.errorf(n, "%s %s is not one of the schema's versions (%s to %s)", what, v, d.releases[0], d.releases[len(d.releases)-1])
	}
	return v
}

// within checks that a member's life lies inside its parent's.
func (d *decoder) within(n *yaml.Node, what string, child, parent ir.Life) {
	if child.Since.Less(parent.Since) {
		d.errorf(n, "%s is since %s but what contains it only exists since %s", what, child.Since, parent.Since)
	}
	if parent.Until != nil && (child.Until == nil || parent.Until.Less(*child.Until)) {
		d.errorf(n, "%s outlives what contains it (until %s)", what, parent.Until)
	}
}

// history reads the in/from mapping of a renamed or retyped entry. Its
// version may predate the oldest listed release (history), but may not be
// later than the element's since unless it is a listed release inside the
// element's life.
func (d *decoder) history(n *yaml.Node, what string, life ir.Life) (in ir.Version, from *yaml.Node, ok bool) {
	if n == nil {
		return ir.Version{}, nil, false
	}
	m := d.mapping(n, what, "in!", "from!")
	if m == nil || m["in"] == nil || m["from"] == nil {
		return ir.Version{}, nil, false
	}
	in = d.version(m["in"], what+".in")
	if life.Since.Less(in) {
		if _, ok := d.find(in); !ok || !life.In(in) {
			d.errorf(m["in"], "%s.in %s must be a listed version within the element's life, or predate its since %s", what, in, life.Since)
		}
	}
	return in, m["from"], true
}

// rename reads a renamed entry: the element's earlier spelling, a name
// read by ident.
func (d *decoder) rename(n *yaml.Node, life ir.Life, ident func(*yaml.Node, string) string) *ir.Rename {
	in, from, ok := d.history(n, "renamed", life)
	if !ok {
		return nil
	}
	return &ir.Rename{In: in, From: ident(from, "renamed.from")}
}

// retype reads a retyped entry: the field's earlier type, parsed.
func (d *decoder) retype(n *yaml.Node, life ir.Life, what string) *ir.Retype {
	in, from, ok := d.history(n, "retyped", life)
	if !ok {
		return nil
	}
	return &ir.Retype{In: in, From: d.typ(from, "retyped.from of "+what)}
}

// reword reads a reworded entry: the element's doc before a release, or,
// as a list newest first, before each of several releases.
func (d *decoder) reword(n *yaml.Node, life ir.Life) *ir.Reword {
	if n != nil && n.Kind == yaml.SequenceNode {
		var first, last *ir.Reword
		for _, item := range d.seq(n, "reworded") {
			r := d.reword(item, life)
			if r == nil {
				continue
			}
			if last != nil && !r.In.Less(last.In) {
				d.errorf(item, "reworded lists releases newest first: %s after %s", r.In, last.In)
			}
			if first == nil {
				first = r
			} else {
				last.Earlier = r
			}
			last = r
		}
		return first
	}
	in, from, ok := d.history(n, "reworded", life)
	if !ok {
		return nil
	}
	return &ir.Reword{In: in, From: d.text(from, "reworded.from")}
}

func (d *decoder) find(v ir.Version) (int, bool) {
	for i, r := range d.releases {
		if r == v {
			return i, true
		}
	}
	return 0, false
}

func (d *decoder) macro(n *yaml.Node) *ir.Macro {
	m := d.mapping(n, "a macro", "name!", "since!", "until", "kind", "role", "doc", "values")
	if m == nil {
		return &ir.Macro{Pos: d.pos(n)}
	}
	mac := &ir.Macro{Name: d.ident(m["name"], "macro name", ir.MacroName), Doc: d.text(m["doc"], "doc"), Life: d.life(m), Pos: d.pos(n)}
	switch kind := d.str(m["kind"], "kind"); kind {
	case "", "value":
		mac.Kind = ir.MacroInteger
		if m["values"] == nil {
			d.errorf(n, "macro %s is missing required key \"values\"", mac.Name)
		}
	case "extern_c":
		mac.Kind = ir.MacroExternC
	case "dll":
		mac.Kind = ir.MacroDLL
	default:
		d.errorf(m["kind"], "macro kind must be value, extern_c or dll, not %q", kind)
	}
	if mac.Kind != ir.MacroInteger && m["values"] != nil {
		d.errorf(m["values"], "only value macros have values")
	}
	if m["role"] != nil {
		if mac.Kind != ir.MacroInteger {
			d.errorf(m["role"], "only value macros have roles")
		}
		mac.Role, _ = readRole(d.reader, m["role"], "macro role", ir.MacroRoles())
	}
	for _, vn := range d.seq(m["values"], "values") {
		vm := d.mapping(vn, "a macro value", "since!", "value!")
		if vm == nil || vm["since"] == nil || vm["value"] == nil {
			continue // reported by mapping
		}
		mv := ir.MacroValue{Since: d.release(vm["since"], "since"), Value: d.integer(vm["value"], "value"), Pos: d.pos(vm["value"])}
		switch {
		case m["since"] == nil:
			// the macro's own since is missing (reported): nothing to
			// check its values against
		case len(mac.Values) == 0 && mv.Since != mac.Life.Since:
			d.errorf(vm["since"], "the first value of %s must start at the macro's since %s", mac.Name, mac.Life.Since)
		case len(mac.Values) > 0 && !mac.Values[len(mac.Values)-1].Since.Less(mv.Since):
			d.errorf(vm["since"], "values of %s must be listed oldest first without repeats", mac.Name)
		case !mac.Life.In(mv.Since):
			d.errorf(vm["since"], "value since %s lies outside the life of %s", mv.Since, mac.Name)
		}
		mac.Values = append(mac.Values, mv)
	}
	return mac
}

func (d *decoder) decl(n *yaml.Node) ir.Decl {
	if n.Kind != yaml.MappingNode || len(n.Content) == 0 {
		d.errorf(n, "a declaration must be a mapping starting with struct, enum, flags or functype")
		return nil
	}
	switch kind := n.Content[0].Value; kind {
	case "struct":
		return d.structDecl(n)
	case "enum":
		return d.enumDecl(n)
	case "flags":
		return d.flagsDecl(n)
	case "functype":
		return d.funcDecl(n)
	default:
		d.errorf(n.Content[0], "unknown declaration kind %q (want struct, enum, flags or functype first)", kind)
		return nil
	}
}

func (d *decoder) structDecl(n *yaml.Node) ir.Decl {
	m := d.mapping(n, "a struct", "struct!", "since!", "until", "tag", "typedef_since", "reworded", "doc", "fields!")
	if m == nil {
		return nil
	}
	s := &ir.Struct{Name: d.ident(m["struct"], "struct name", ir.TypeName), Tag: d.ident(m["tag"], "tag", ir.TypeName), Doc: d.text(m["doc"], "doc"), Life: d.life(m), Pos: d.pos(n)}
	s.Reworded = d.reword(m["reworded"], s.Life)
	if m["typedef_since"] != nil {
		// A release after every listed one says that no listed release
		// has the typedef yet, as when upstream adds it in its next one.
		v := d.version(m["typedef_since"], "typedef_since")
		if last := d.releases[len(d.releases)-1]; !last.Less(v) {
			v = d.release(m["typedef_since"], "typedef_since")
		}
		if v.Less(s.Life.Since) || s.Tag == "" {
			d.errorf(m["typedef_since"], "typedef_since %s needs a struct tag and a release from since %s on", v, s.Life.Since)
		}
		s.TypedefSince = &v
	}
	for _, fn := range d.seq(m["fields"], "fields") {
		fm := d.mapping(fn, "a field", "name!", "type!", "since!", "until", "retyped", "reworded", "holds", "nullable", "nullable_changed", "doc")
		if fm == nil {
			continue
		}
		f := &ir.Field{Name: d.ident(fm["name"], "field name", ir.FieldName), Doc: d.text(fm["doc"], "doc"), Life: d.life(fm), Pos: d.pos(fn)}
		d.within(fn, "field "+f.Name, f.Life, s.Life)
		f.Type = d.typ(fm["type"], "type of "+s.Name+"."+f.Name)
		f.Retyped = d.retype(fm["retyped"], f.Life, s.Name+"."+f.Name)
		if fm["holds"] != nil {
			// Resolved with the other names, in validate.
			d.holds = append(d.holds, held{field: f, owner: s.Name, name: d.ident(fm["holds"], "holds", ir.TypeName), pos: d.pos(fm["holds"])})
		}
		f.Nullable = d.nullable(fm, f)
		f.Reworded = d.reword(fm["reworded"], f.Life)
		s.Fields = append(s.Fields, f)
	}
	if m["fields"] != nil && len(s.Fields) == 0 {
		d.errorf(m["fields"], "struct %s has no fields", s.Name)
	}
	return s
}

func (d *decoder) enumDecl(n *yaml.Node) ir.Decl {
	m := d.mapping(n, "an enum", "enum!", "since!", "until", "storage!", "cxx_base", "role", "unsigned_literals", "doc", "values!")
	if m == nil {
		return nil
	}
	e := &ir.Enum{
		Name: d.ident(m["enum"], "enum name", ir.TypeName), Storage: d.str(m["storage"], "storage"),
		UnsignedLiterals: d.boolean(m["unsigned_literals"], "unsigned_literals"),
		Doc:              d.text(m["doc"], "doc"), Life: d.life(m), Pos: d.pos(n),
	}
	lo, hi, ok := ir.IntRange(e.Storage)
	if !ok && m["storage"] != nil {
		d.errorf(m["storage"], "storage type %q is not a fixed-width integer type", e.Storage)
	}
	if m["role"] != nil {
		e.Role, _ = readRole(d.reader, m["role"], "enum role", ir.EnumRoles())
	}
	d.cxxBase(e, m["cxx_base"])
	seen := map[int64]string{}
	for _, vn := range d.seq(m["values"], "values") {
		vm := d.mapping(vn, "an enumerator", "name!", "value!", "since!", "until", "renamed", "reworded", "host_readable", "streamless", "opaque", "bits", "dtypes", "float", "doc")
		if vm == nil {
			continue
		}
		ev := &ir.Enumerator{Name: d.ident(vm["name"], "enumerator name", ir.EnumeratorName), Value: d.integer(vm["value"], "value"), Doc: d.text(vm["doc"], "doc"), Life: d.life(vm), Pos: d.pos(vn)}
		d.within(vn, "enumerator "+ev.Name, ev.Life, e.Life)
		ev.Renamed = d.rename(vm["renamed"], ev.Life, func(n *yaml.Node, what string) string { return d.ident(n, what, ir.EnumeratorName) })
		ev.Reworded = d.reword(vm["reworded"], ev.Life)
		d.enumeratorRules(e, ev, vm)
		if ok && vm["value"] != nil && (ev.Value < lo || ev.Value > hi) {
			d.errorf(vm["value"], "value %d of %s does not fit the storage type %s [%d, %d]", ev.Value, ev.Name, e.Storage, lo, hi)
		} else if vm["value"] != nil && (ev.Value < -1<<31 || ev.Value > 1<<31-1) {
			d.errorf(vm["value"], "value %d of %s does not fit a C int, which C enumerators must", ev.Value, ev.Name)
		}
		if prev, dup := seen[ev.Value]; dup && vm["value"] != nil {
			d.errorf(vm["value"], "value %d of %s duplicates %s", ev.Value, ev.Name, prev)
		}
		seen[ev.Value] = ev.Name
		e.Values = append(e.Values, ev)
	}
	return e
}

func (d *decoder) flagsDecl(n *yaml.Node) ir.Decl {
	m := d.mapping(n, "a flags group", "flags!", "since!", "until", "type!", "doc", "bits!")
	if m == nil {
		return nil
	}
	f := &ir.Flags{Name: d.ident(m["flags"], "flags name", ir.TypeName), Type: d.str(m["type"], "type"), Doc: d.text(m["doc"], "doc"), Life: d.life(m), Pos: d.pos(n)}
	_, hi, ok := ir.IntRange(f.Type)
	if (!ok || ir.Scalars[f.Type].Signed) && m["type"] != nil {
		d.errorf(m["type"], "flags type %q is not an unsigned fixed-width integer type", f.Type)
	}
	seen := map[int64]string{}
	for _, bn := range d.seq(m["bits"], "bits") {
		bm := d.mapping(bn, "a flag", "name!", "bit!", "since!", "until", "role", "doc")
		if bm == nil {
			continue
		}
		b := &ir.Flag{Name: d.ident(bm["name"], "flag name", ir.EnumeratorName), Doc: d.text(bm["doc"], "doc"), Life: d.life(bm), Pos: d.pos(bn)}
		if bm["role"] != nil {
			b.Role, _ = readRole(d.reader, bm["role"], "flag role", ir.FlagRoles())
		}
		d.within(bn, "flag "+b.Name, b.Life, f.Life)
		bit := d.integer(bm["bit"], "bit")
		if ok && bm["bit"] != nil && (bit < 0 || hi>>uint(bit) == 0 && bit != int64(ir.Scalars[f.Type].Size*8-1)) {
			d.errorf(bm["bit"], "bit %d of %s does not fit %s", bit, b.Name, f.Type)
		}
		if prev, dup := seen[bit]; dup {
			d.errorf(bm["bit"], "bit %d of %s duplicates %s", bit, b.Name, prev)
		}
		seen[bit] = b.Name
		b.Bit = int(bit)
		f.Bits = append(f.Bits, b)
	}
	return f
}

func (d *decoder) funcDecl(n *yaml.Node) ir.Decl {
	m := d.mapping(n, "a functype", "functype!", "since!", "until", "doc", "returns!", "params")
	if m == nil {
		return nil
	}
	f := &ir.FuncType{Name: d.ident(m["functype"], "functype name", ir.TypeName), Doc: d.text(m["doc"], "doc"), Life: d.life(m), Pos: d.pos(n)}
	f.Sig = d.signature(m, f.Name)
	return f
}

// signature reads returns/params from a mapping.
func (d *decoder) signature(m map[string]*yaml.Node, what string) *ir.Signature {
	sig := &ir.Signature{Returns: d.returnType(m["returns"], "return type of "+what)}
	names := map[string]string{} // by ir.Fold
	for _, pn := range d.seq(m["params"], "params") {
		pm := d.mapping(pn, "a parameter", "name!", "type!")
		if pm == nil {
			continue
		}
		p := &ir.Param{Name: d.ident(pm["name"], "parameter name", ir.ParamName)}
		switch prev, dup := names[ir.Fold(p.Name)]; {
		case dup && prev == p.Name:
			d.errorf(pm["name"], "duplicate parameter %q in %s", p.Name, what)
		case dup:
			d.errorf(pm["name"], "parameters %q and %q of %s differ only in case or underscores, which Rust's escape of keywords (self_) does not keep apart", prev, p.Name, what)
		}
		names[ir.Fold(p.Name)] = p.Name
		p.Type = d.typ(pm["type"], "type of parameter "+p.Name+" of "+what)
		sig.Params = append(sig.Params, p)
	}
	return sig
}

func (d *decoder) returnType(n *yaml.Node, what string) *ir.Type {
	if n != nil && n.Kind == yaml.ScalarNode && n.Value == "void" {
		return &ir.Type{Kind: ir.Scalar, Name: "void"}
	}
	return d.typ(n, what)
}

// typ reads a C type: a string, or a mapping {returns, params} for an
// inline function pointer.
func (d *decoder) typ(n *yaml.Node, what string) *ir.Type {
	if n == nil {
		return &ir.Type{Kind: ir.Scalar, Name: "int"}
	}
	if n.Kind == yaml.MappingNode {
		m := d.mapping(n, "a function type", "returns!", "params")
		if m == nil {
			return &ir.Type{Kind: ir.Scalar, Name: "int"}
		}
		return &ir.Type{Kind: ir.Func, Sig: d.signature(m, what)}
	}
	t, err := ir.ParseType(d.str(n, what))
	if err != nil {
		d.errorf(n, "%s: %v", what, err)
		return &ir.Type{Kind: ir.Scalar, Name: "int"}
	}
	t.Walk(func(t *ir.Type) { t.Pos = d.pos(n) })
	return t
}
