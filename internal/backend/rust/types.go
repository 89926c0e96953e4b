package rust

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dlgen/dlgen/internal/ir"
)

// The Rust spelling of C types.

var rustScalar = map[string]string{
	"char": "c_char", "int": "c_int",
	"int8_t": "i8", "int16_t": "i16", "int32_t": "i32", "int64_t": "i64",
	"uint8_t": "u8", "uint16_t": "u16", "uint32_t": "u32", "uint64_t": "u64",
}

// ident spells a C member or parameter name as a Rust identifier: a word
// on one of the backend's reserved lists that apply to fields gets a
// trailing underscore (self and friends cannot be raw identifiers). The
// schema refuses such field names; a parameter may be one (DLPack's
// deleter takes self).
func ident(c string) string {
	for _, r := range reserved {
		if r.On&ir.FieldName != 0 && slices.Contains(strings.Fields(r.Words), c) {
			return c + "_"
		}
	}
	return c
}

// rtype is a Rust type: a plain type, or Option<unsafe extern "C"
// fn(...) -> R>, the C function pointer.
type rtype struct {
	plain  string
	params []rparam // for a function pointer
	ret    *rtype   // nil for void
	zero   string   // its zero value as a constant expression: 0, a NULL pointer, None
}

type rparam struct {
	name string
	typ  rtype
}

func (t rtype) isFunc() bool { return t.plain == "" }

// text spells t for a line indented by indent. A function pointer has its
// parameters one a line, one level deeper, whatever their length: one
// layout for every release, which rustfmt would change with the width of
// the names, so the templates mark each declaration holding one
// #[rustfmt::skip].
func (t rtype) text(indent string) string {
	if !t.isFunc() {
		return t.plain
	}
	var b strings.Builder
	b.WriteString(`Option<unsafe extern "C" fn(`)
	if len(t.params) > 0 {
		b.WriteString("\n")
		for _, p := range t.params {
			b.WriteString(indent + "    " + p.name + ": " + p.typ.text(indent+"    ") + ",\n")
		}
		b.WriteString(indent)
	}
	b.WriteString(")")
	if t.ret != nil {
		b.WriteString(" -> " + t.ret.text(indent))
	}
	b.WriteString(">")
	return b.String()
}

// snakeCase reports whether every parameter name, nested ones too, is
// in snake case.
func (t rtype) snakeCase() bool {
	for _, p := range t.params {
		if strings.ToLower(p.name) != p.name || !p.typ.snakeCase() {
			return false
		}
	}
	return true
}

// rustType returns the Rust type with the ABI of t, in a field or
// parameter.
func rustType(t *ir.Type) (rtype, error) {
	switch t.Kind {
	case ir.Scalar:
		s, ok := rustScalar[t.Name]
		if !ok {
			return rtype{}, fmt.Errorf("no Rust type for C %s", t.Name)
		}
		return rtype{plain: s, zero: "0"}, nil
	case ir.Pointer:
		mut, null := "*mut ", "core::ptr::null_mut()"
		if t.Elem.Const {
			mut, null = "*const ", "core::ptr::null()"
		}
		if t.Elem.Kind == ir.Scalar && t.Elem.Name == "void" {
			return rtype{plain: mut + "c_void", zero: null}, nil
		}
		if t.Elem.Kind == ir.Func {
			return rtype{}, fmt.Errorf("pointer to an inline function type is not supported")
		}
		elem, err := rustType(t.Elem)
		if err != nil {
			return rtype{}, err
		}
		return rtype{plain: mut + elem.plain, zero: null}, nil
	case ir.Func:
		return funcType(t.Sig)
	}
	if e, ok := t.Decl.(*ir.Enum); ok && ir.Scalars[e.Storage].Size != 4 {
		// C stores an enum-typed field or argument as int; the newtype
		// over a narrower integer would change the layout.
		return rtype{}, fmt.Errorf("enum %s is stored as %s, which has not the size of the C int a field of it takes", e.Name, e.Storage)
	}
	switch t.Decl.(type) {
	case *ir.Enum:
		return rtype{plain: t.Name, zero: t.Name + "(0)"}, nil
	case *ir.FuncType:
		return rtype{plain: t.Name, zero: "None"}, nil
	}
	return rtype{plain: t.Name, zero: t.Name + "::ZERO"}, nil
}

// funcType is the nullable function pointer of sig.
func funcType(sig *ir.Signature) (rtype, error) {
	f := rtype{zero: "None"}
	if !(sig.Returns.Kind == ir.Scalar && sig.Returns.Name == "void") {
		r, err := rustType(sig.Returns)
		if err != nil {
			return rtype{}, err
		}
		f.ret = &r
	}
	for _, p := range sig.Params {
		pt, err := rustType(p.Type)
		if err != nil {
			return rtype{}, fmt.Errorf("parameter %s: %w", p.Name, err)
		}
		f.params = append(f.params, rparam{name: ident(p.Name), typ: pt})
	}
	return f, nil
}

// pointerFree reports whether a struct holds only integers and structs of
// integers, so that comparing and hashing it are meaningful.
func pointerFree(s *ir.Struct) bool {
	for _, f := range s.Fields {
		switch f.Type.Kind {
		case ir.Pointer, ir.Func:
			return false
		case ir.Named:
			switch d := f.Type.Decl.(type) {
			case *ir.FuncType:
				return false
			case *ir.Struct:
				if !pointerFree(d) {
					return false
				}
			}
		}
	}
	return true
}
