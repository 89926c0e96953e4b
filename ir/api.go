package ir

// API is one release of the schema, resolved: only what exists in that
// release, every rename and retype applied. Backends render an API.
type API struct {
	Name        string
	HeaderGuard string
	Release     Release
	Macros      []*Macro
	Decls       []Decl
	Python      []*PythonName
}

// Version is the release this API describes.
func (a *API) Version() Version { return a.Release.Version }

// At returns the API of release v, which must be one of s.Releases.
func (s *Schema) At(v Version) *API {
	rel, ok := s.Lookup(v)
	if !ok {
		panic("ir: At called with unsupported release " + v.String())
	}
	api := &API{Name: s.Name, HeaderGuard: s.HeaderGuard, Release: rel}
	for _, m := range s.Macros {
		if m.Life.In(v) {
			api.Macros = append(api.Macros, m)
		}
	}
	// Resolved copies, so that Named types point at the copies of this
	// release and names are spelled as in this release.
	copies := map[Decl]Decl{}
	for _, d := range s.Decls {
		if !d.DeclLife().In(v) {
			continue
		}
		var c Decl
		switch d := d.(type) {
		case *Struct:
			cs := *d
			cs.Fields = nil
			for _, f := range d.Fields {
				if f.Life.In(v) {
					cf := *f
					if f.Retyped != nil && v.Less(f.Retyped.In) {
						cf.Type, _ = ParseType(f.Retyped.From) // validated by the loader
					}
					cs.Fields = append(cs.Fields, &cf)
				}
			}
			c = &cs
		case *Enum:
			ce := *d
			ce.Values = nil
			for _, e := range d.Values {
				if e.Life.In(v) {
					cv := *e
					if e.Renamed != nil && v.Less(e.Renamed.In) {
						cv.Name = e.Renamed.From
					}
					ce.Values = append(ce.Values, &cv)
				}
			}
			if d.CXXFixedSince != nil && v.Less(*d.CXXFixedSince) {
				ce.CXXFixedSince = nil
			}
			c = &ce
		case *Flags:
			cf := *d
			cf.Bits = nil
			for _, b := range d.Bits {
				if b.Life.In(v) {
					cf.Bits = append(cf.Bits, b)
				}
			}
			c = &cf
		case *FuncType:
			cf := *d
			cf.Sig = copySig(d.Sig)
			c = &cf
		}
		copies[d] = c
		api.Decls = append(api.Decls, c)
	}
	byName := map[string]Decl{}
	for _, d := range api.Decls {
		byName[d.DeclName()] = d
	}
	relink := func(t *Type) {
		t.Walk(func(t *Type) {
			if t.Kind == Named {
				t.Decl = byName[t.Name]
			}
		})
	}
	for _, d := range api.Decls {
		switch d := d.(type) {
		case *Struct:
			for i, f := range d.Fields {
				cf := *f
				cf.Type = copyType(f.Type)
				relink(cf.Type)
				d.Fields[i] = &cf
			}
		case *FuncType:
			relink(&Type{Kind: Func, Sig: d.Sig})
		}
	}
	for _, p := range s.Python {
		if p.Life.In(v) {
			cp := *p
			if p.Renamed != nil && v.Less(p.Renamed.In) {
				cp.Name = p.Renamed.From
			}
			api.Python = append(api.Python, &cp)
		}
	}
	return api
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
