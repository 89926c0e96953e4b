package ir

// API is one release of the schema, resolved: only what exists in that
// release, every rename and retype applied (with the previous spelling
// kept), every macro's value and every role settled. Backends render an
// API.
type API struct {
	HeaderGuard string        // the C include guard, the schema's
	Release     Release       // the release resolved
	Macros      []*Macro      // each with its Value in this release
	Decls       []Decl        // named types and Field.Holds point at declarations of this API
	Versions    VersionMacros // the version macros of this release, by role
	Protocol    Protocol      // the Python protocol's names in this release, by role
	Enum        EnumsByRole   // the enums backends rely on, by role
	Flag        FlagsByRole   // the flag bits backends rely on, by role
	Rules       Rules         // the import rules and limits of this release
}

// Version is the release this API describes.
func (a *API) Version() Version { return a.Release.Version }

// Versioned reports whether the release has the versioned protocol
// (DLManagedTensorVersioned, its flags and capsules), as its roles say: a
// loaded schema gives such a release major and minor version macros,
// versioned capsule names and the read-only and is-copied flags.
func (a *API) Versioned() bool { return a.Protocol.VersionedCapsule != nil }

// At returns the API of release v, which must be one of s.Releases (a
// precondition: callers settle the release first, see Lookup).
func (s *Schema) At(v Version) *API {
	rel, ok := s.Lookup(v)
	if !ok {
		panic("ir: At called with unsupported release " + v.String())
	}
	api := &API{HeaderGuard: s.HeaderGuard, Release: rel, Rules: s.Rules}
	for _, m := range s.Macros {
		if m.Life.In(v) {
			c := m.at(v)
			api.Macros = append(api.Macros, c)
			api.Versions.Set(c)
		}
	}
	for _, d := range s.Decls {
		if !d.DeclLife().In(v) {
			continue
		}
		c := declAt(d, v)
		api.Decls = append(api.Decls, c)
		switch c := c.(type) {
		case *Enum:
			api.Enum.Set(c)
		case *Flags:
			for _, b := range c.Bits {
				api.Flag.Set(b)
			}
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
	c.Name, c.Previous = spellingAt(p.Name, p.Renamed, v)
	return &c
}

// spellingAt is how an element called name, with rename r, is spelled in
// release v, and how it was spelled before (when v follows the rename).
func spellingAt(name string, r *Rename, v Version) (now, previous string) {
	switch {
	case r == nil:
		return name, ""
	case v.Less(r.In):
		return r.From, ""
	}
	return name, r.From
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
	c.Doc = s.Reworded.docAt(v, s.Doc)
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
	for ; r != nil && v.Less(r.In); r = r.Earlier {
		doc = r.From
	}
	return doc
}

func (e *Enum) at(v Version) *Enum {
	c := *e
	c.Values = nil
	for _, ev := range e.Values {
		if ev.Life.In(v) {
			cv := *ev
			cv.Name, cv.Previous = spellingAt(ev.Name, ev.Renamed, v)
			cv.Doc = ev.Reworded.docAt(v, ev.Doc)
			c.Values = append(c.Values, &cv)
		}
	}
	if e.CXXBaseSince != nil && v.Less(*e.CXXBaseSince) {
		c.CXXBase, c.CXXBaseSince = "", nil
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
				if f.Holds != nil {
					f.Holds = byName[f.Holds.DeclName()]
				}
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

// DataTypeNames lists the names of element types, in the order of the
// type codes and of each code's names; none without a dtype_code enum.
func (a *API) DataTypeNames() []NamedDataType {
	var out []NamedDataType
	if e := a.Enum.DataTypeCode; e != nil {
		for _, ev := range e.Values {
			for _, n := range ev.DataTypes {
				out = append(out, NamedDataType{Name: n.Name, Code: ev.Value, Bits: n.Bits})
			}
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
