package ir

// API is one release of the schema, resolved: only what exists in that
// release, every rename and retype applied, every macro's value and every
// role settled. Backends render an API.
type API struct {
	HeaderGuard string        // the C include guard, the schema's
	Release     Release       // the release resolved
	Macros      []*Macro      // each with its Value in this release
	Decls       []Decl        // named types point at declarations of this API
	Versions    VersionMacros // the version macros of this release, by role
	Protocol    Protocol      // the Python protocol's names in this release, by role
}

// Version is the release this API describes.
func (a *API) Version() Version { return a.Release.Version }

// At returns the API of release v, which must be one of s.Releases (a
// precondition: callers settle the release first, see Lookup).
func (s *Schema) At(v Version) *API {
	rel, ok := s.Lookup(v)
	if !ok {
		panic("ir: At called with unsupported release " + v.String())
	}
	api := &API{HeaderGuard: s.HeaderGuard, Release: rel}
	for _, m := range s.Macros {
		if m.Life.In(v) {
			c := m.at(v)
			api.Macros = append(api.Macros, c)
			api.Versions.Set(c)
		}
	}
	for _, d := range s.Decls {
		if d.DeclLife().In(v) {
			api.Decls = append(api.Decls, declAt(d, v))
		}
	}
	link(api.Decls)
	for _, p := range s.Python {
		if p.Life.In(v) {
			api.Protocol.Set(p.at(v))
		}
	}
	return api
}

func (m *Macro) at(v Version) *Macro {
	c := *m
	c.Value = m.valueAt(v)
	return &c
}

func (p *PythonName) at(v Version) *PythonName {
	c := *p
	if p.Renamed != nil && v.Less(p.Renamed.In) {
		c.Name = p.Renamed.From
	}
	return &c
}

// declAt copies d as it is in release v. Types are deep copies, so that
// link can point them at this release's declarations.
func declAt(d Decl, v Version) Decl {
	switch d := d.(type) {
	case *Struct:
		return d.at(v)
	case *Enum:
		return d.at(v)
	case *Flags:
		return d.at(v)
	case *FuncType:
		c := *d
		c.Sig = copySig(d.Sig)
		return &c
	}
	panic("ir: unknown declaration type")
}

func (s *Struct) at(v Version) *Struct {
	c := *s
	c.Fields = nil
	for _, f := range s.Fields {
		if f.Life.In(v) {
			cf := *f
			cf.Type = copyType(f.typeAt(v))
			cf.Doc = f.Reworded.docAt(v, f.Doc)
			c.Fields = append(c.Fields, &cf)
		}
	}
	return &c
}

// typeAt is the field's type in release v.
func (f *Field) typeAt(v Version) *Type {
	if f.Retyped != nil && v.Less(f.Retyped.In) {
		return f.Retyped.From
	}
	return f.Type
}

// docAt is the doc in release v of an element whose doc is now doc.
func (r *Reword) docAt(v Version, doc string) string {
	if r != nil && v.Less(r.In) {
		return r.From
	}
	return doc
}

func (e *Enum) at(v Version) *Enum {
	c := *e
	c.Values = nil
	for _, ev := range e.Values {
		if ev.Life.In(v) {
			cv := *ev
			if ev.Renamed != nil && v.Less(ev.Renamed.In) {
				cv.Name = ev.Renamed.From
			}
			cv.Doc = ev.Reworded.docAt(v, ev.Doc)
			c.Values = append(c.Values, &cv)
		}
	}
	if e.CXXFixedSince != nil && v.Less(*e.CXXFixedSince) {
		c.CXXFixedSince = nil
	}
	return &c
}

func (f *Flags) at(v Version) *Flags {
	c := *f
	c.Bits = nil
	for _, b := range f.Bits {
		if b.Life.In(v) {
			c.Bits = append(c.Bits, b)
		}
	}
	return &c
}

// link points every named type of decls at the declaration of that name
// among decls.
func link(decls []Decl) {
	byName := map[string]Decl{}
	for _, d := range decls {
		byName[d.DeclName()] = d
	}
	relink := func(t *Type) {
		t.Walk(func(t *Type) {
			if t.Kind == Named {
				t.Decl = byName[t.Name]
			}
		})
	}
	for _, d := range decls {
		switch d := d.(type) {
		case *Struct:
			for _, f := range d.Fields {
				relink(f.Type)
			}
		case *FuncType:
			relink(&Type{Kind: Func, Sig: d.Sig})
		}
	}
}

func copyType(t *Type) *Type {
	c := *t
	if t.Elem != nil {
		c.Elem = copyType(t.Elem)
	}
	if t.Sig != nil {
		c.Sig = copySig(t.Sig)
	}
	return &c
}

func copySig(s *Signature) *Signature {
	c := &Signature{Returns: copyType(s.Returns)}
	for _, p := range s.Params {
		c.Params = append(c.Params, &Param{Name: p.Name, Type: copyType(p.Type)})
	}
	return c
}

// Structs returns the API's structs in declaration order.
func (a *API) Structs() []*Struct {
	var out []*Struct
	for _, d := range a.Decls {
		if s, ok := d.(*Struct); ok {
			out = append(out, s)
		}
	}
	return out
}

// Enums returns the API's enums in declaration order.
func (a *API) Enums() []*Enum {
	var out []*Enum
	for _, d := range a.Decls {
		if e, ok := d.(*Enum); ok {
			out = append(out, e)
		}
	}
	return out
}

// Macro returns the macro called name, or nil.
func (a *API) Macro(name string) *Macro {
	for _, m := range a.Macros {
		if m.Name == name {
			return m
		}
	}
	return nil
}
