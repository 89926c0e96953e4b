package schema

import (
	"fmt"

	"github.com/dlgen/dlgen/internal/ir"
)

// validate checks what can only be checked once everything is read:
// names and type references across declarations.
func (r *reader) validate(s *ir.Schema) {
	// C has one namespace for typedefs, enumerators and macros.
	global := map[string]ir.Pos{}
	claim := func(name string, pos ir.Pos) {
		if name == "" {
			return
		}
		if prev, dup := global[name]; dup {
			r.errs = append(r.errs, &Error{Pos: pos, Msg: fmt.Sprintf("duplicate name %s (first declared at %s)", name, prev)})
			return
		}
		global[name] = pos
	}
	for _, m := range s.Macros {
		claim(m.Name, m.Pos)
	}
	index := map[string]int{}
	for i, d := range s.Decls {
		claim(d.DeclName(), d.DeclPos())
		index[d.DeclName()] = i
		switch d := d.(type) {
		case *ir.Enum:
			for _, e := range d.Values {
				claim(e.Name, e.Pos)
			}
		case *ir.Flags:
			for _, b := range d.Bits {
				claim(b.Name, b.Pos)
			}
		case *ir.Struct:
			fields := map[string]*ir.Field{} // by ir.Fold
			for _, f := range d.Fields {
				switch prev, dup := fields[ir.Fold(f.Name)]; {
				case dup && prev.Name == f.Name:
					r.errs = append(r.errs, &Error{Pos: f.Pos, Msg: fmt.Sprintf("duplicate field %s in %s (first at %s)", f.Name, d.Name, prev.Pos)})
				case dup:
					r.errs = append(r.errs, &Error{Pos: f.Pos, Msg: fmt.Sprintf("fields %s and %s of %s (at %s) differ only in case or underscores: "+
						"Go, which capitalises field names, and Rust, which writes a keyword with an underscore, would give them one name", f.Name, prev.Name, d.Name, prev.Pos)})
				}
				fields[ir.Fold(f.Name)] = f
			}
		}
	}
	pythonNames := map[string]ir.Pos{}
	for _, p := range s.Python {
		if prev, dup := pythonNames[p.Name]; dup {
			r.errs = append(r.errs, &Error{Pos: p.Pos, Msg: fmt.Sprintf("duplicate python name %s (first at %s)", p.Name, prev)})
		}
		pythonNames[p.Name] = p.Pos
	}

	// Every named type must resolve to a struct, enum or functype that
	// exists whenever its user does and is declared before it, unless it
	// is reached through a pointer to its struct tag.
	for i, d := range s.Decls {
		check := func(t *ir.Type, life ir.Life, user string) {
			r.resolve(s, t, life, user, i, index, false)
		}
		switch d := d.(type) {
		case *ir.Struct:
			for _, f := range d.Fields {
				check(f.Type, f.Life, d.Name+"."+f.Name)
				if f.Retyped != nil {
					check(f.Retyped.From, before(f.Life, f.Retyped.In), d.Name+"."+f.Name+" before "+f.Retyped.In.String())
				}
			}
		case *ir.FuncType:
			check(&ir.Type{Kind: ir.Func, Sig: d.Sig}, d.Life, d.Name)
		}
	}
	r.validateRules(s, index)
	r.validateRenames(s)
	r.validateRoles(s)
}

// validateRenames checks that an old spelling (renamed.from) clashes with
// no other name of a release that uses it: C's namespace for enumerators,
// or the Python names.
func (r *reader) validateRenames(s *ir.Schema) {
	reported := map[ir.Pos]bool{}
	for _, rel := range s.Releases {
		v := rel.Version
		c := map[string]ir.Pos{}
		var renamedC []*ir.Enumerator
		for _, m := range s.Macros {
			if m.Life.In(v) {
				c[m.Name] = m.Pos
			}
		}
		for _, d := range s.Decls {
			if !d.DeclLife().In(v) {
				continue
			}
			c[d.DeclName()] = d.DeclPos()
			switch d := d.(type) {
			case *ir.Enum:
				for _, e := range d.Values {
					switch {
					case !e.Life.In(v):
					case e.Renamed != nil && v.Less(e.Renamed.In):
						renamedC = append(renamedC, e)
					default:
						c[e.Name] = e.Pos
					}
				}
			case *ir.Flags:
				for _, b := range d.Bits {
					if b.Life.In(v) {
						c[b.Name] = b.Pos
					}
				}
			}
		}
		py := map[string]ir.Pos{}
		var renamedPy []*ir.PythonName
		for _, p := range s.Python {
			switch {
			case !p.Life.In(v):
			case p.Renamed != nil && v.Less(p.Renamed.In):
				renamedPy = append(renamedPy, p)
			default:
				py[p.Name] = p.Pos
			}
		}
		clash := func(names map[string]ir.Pos, old string, pos ir.Pos) {
			if prev, dup := names[old]; dup && !reported[pos] {
				reported[pos] = true
				r.errs = append(r.errs, &Error{Pos: pos, Msg: fmt.Sprintf("renamed.from %s is, in release %s, also the name at %s", old, v, prev)})
			}
			names[old] = pos
		}
		for _, e := range renamedC {
			clash(c, e.Renamed.From, e.Pos)
		}
		for _, p := range renamedPy {
			clash(py, p.Renamed.From, p.Pos)
		}
	}
}

// before is the part of life older than release v: the releases in which
// a retyped field still has its old type. A retype that predates life is
// checked over the whole life, so that its type must still resolve.
func before(life ir.Life, v ir.Version) ir.Life {
	if !life.Since.Less(v) || life.Until != nil && life.Until.Less(v) {
		return life
	}
	return ir.Life{Since: life.Since, Until: &v}
}

func (r *reader) resolve(s *ir.Schema, t *ir.Type, life ir.Life, user string, at int, index map[string]int, behindPointer bool) {
	switch t.Kind {
	case ir.Pointer:
		r.resolve(s, t.Elem, life, user, at, index, true)
		return
	case ir.Func:
		r.resolve(s, t.Sig.Returns, life, user, at, index, true)
		for _, p := range t.Sig.Params {
			r.resolve(s, p.Type, life, user, at, index, true)
		}
		return
	case ir.Scalar:
		return
	}
	fail := func(format string, args ...any) {
		r.errs = append(r.errs, &Error{Pos: t.Pos, Msg: fmt.Sprintf(format, args...)})
	}
	i, ok := index[t.Name]
	if !ok {
		fail("%s uses undefined type %s", user, t.Name)
		return
	}
	d := s.Decls[i]
	t.Decl = d
	switch d := d.(type) {
	case *ir.Flags:
		fail("%s uses %s, a flags group, as a type; use its integer type", user, t.Name)
		return
	case *ir.Struct:
		if t.StructTag && d.Tag != t.Name {
			fail("%s spells struct %s but %s has no struct tag %s", user, t.Name, t.Name, t.Name)
			return
		}
		if !t.StructTag && !d.Typedef(life.Since) {
			fail("%s exists since %s but uses the typedef %s, which only exists since %s; spell it struct %s", user, life.Since, t.Name, d.TypedefSince, d.Tag)
		}
	default:
		if t.StructTag {
			fail("%s spells struct %s but %s is not a struct", user, t.Name, t.Name)
			return
		}
	}
	if i >= at && !(behindPointer && t.StructTag) {
		fail("%s uses %s before it is declared; move the declaration up or use a pointer to its struct tag", user, t.Name)
	}
	dl := d.DeclLife()
	if life.Since.Less(dl.Since) {
		fail("%s exists since %s but uses %s, which only exists since %s", user, life.Since, t.Name, dl.Since)
	}
	if dl.Until != nil && (life.Until == nil || dl.Until.Less(*life.Until)) {
		fail("%s uses %s, which is removed in %s", user, t.Name, dl.Until)
	}
}
