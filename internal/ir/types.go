package ir

import (
	"fmt"
	"strings"
)

// TypeKind classifies a Type.
type TypeKind int

const (
	Scalar  TypeKind = iota // a C builtin or <stdint.h> type, or void
	Named                   // a declaration of the schema
	Pointer                 // a pointer to Elem
	Func                    // an inline function-pointer type
)

// Type is a C type as used by fields and parameters.
type Type struct {
	Kind TypeKind // which of the fields below apply
	// Name is the scalar's C spelling (Scalar) or the declaration's name
	// (Named). For Named types spelled "struct X", StructTag is set.
	Name      string
	StructTag bool       // a Named type spelled "struct Name"
	Const     bool       // the pointee or scalar is const-qualified
	Elem      *Type      // the pointee, for Pointer
	Sig       *Signature // for Func
	Decl      Decl       // resolved declaration, for Named
	Pos       Pos        // where the schema spelled it
}

// ScalarInfo describes a scalar C type.
type ScalarInfo struct {
	Size   int  // bytes; pointer-sized types use 0 and take the ABI's
	Signed bool // a signed integer type
	Int    bool // an integer type
}

// Scalars are the scalar C types a schema may use.
var Scalars = map[string]ScalarInfo{
	"void":     {},
	"char":     {Size: 1, Signed: true, Int: true},
	"int":      {Size: 4, Signed: true, Int: true},
	"int8_t":   {Size: 1, Signed: true, Int: true},
	"int16_t":  {Size: 2, Signed: true, Int: true},
	"int32_t":  {Size: 4, Signed: true, Int: true},
	"int64_t":  {Size: 8, Signed: true, Int: true},
	"uint8_t":  {Size: 1, Int: true},
	"uint16_t": {Size: 2, Int: true},
	"uint32_t": {Size: 4, Int: true},
	"uint64_t": {Size: 8, Int: true},
}

// IntRange returns the inclusive range of a fixed-width integer scalar.
func IntRange(name string) (lo, hi int64, ok bool) {
	info, ok := Scalars[name]
	if !ok || !info.Int {
		return 0, 0, false
	}
	bits := uint(info.Size * 8)
	if info.Signed {
		return -1 << (bits - 1), 1<<(bits-1) - 1, true
	}
	if bits == 64 {
		return 0, 1<<63 - 1, true // values are parsed as int64
	}
	return 0, 1<<bits - 1, true
}

// ParseType parses the C spelling of a non-function type: a scalar or name,
// optionally prefixed by const and/or struct and followed by stars, such as
// "int64_t*", "const char*" or "struct DLManagedTensor*".
func ParseType(s string) (*Type, error) {
	text := strings.TrimSpace(s)
	stars := 0
	for strings.HasSuffix(text, "*") {
		stars++
		text = strings.TrimSpace(strings.TrimSuffix(text, "*"))
	}
	words := strings.Fields(text)
	t := &Type{}
	for len(words) > 1 {
		switch words[0] {
		case "const":
			t.Const = true
		case "struct":
			t.StructTag = true
		default:
			return nil, fmt.Errorf("cannot parse C type %q", s)
		}
		words = words[1:]
	}
	if len(words) != 1 || !isIdent(words[0]) || words[0] == "struct" || words[0] == "const" {
		return nil, fmt.Errorf("cannot parse C type %q", s)
	}
	t.Name = words[0]
	if _, ok := Scalars[t.Name]; ok && !t.StructTag {
		t.Kind = Scalar
	} else {
		t.Kind = Named
	}
	if t.Kind == Scalar && t.Name == "void" && stars == 0 {
		return nil, fmt.Errorf("void is only usable behind a pointer or as a return type")
	}
	for ; stars > 0; stars-- {
		t = &Type{Kind: Pointer, Elem: t}
	}
	return t, nil
}

func isIdent(s string) bool {
	for i, r := range s {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9' {
			continue
		}
		return false
	}
	return s != ""
}

// C returns the C spelling of t, with the declarator name placed where C
// wants it ("int64_t* shape", "void (*deleter)(struct DLManagedTensor* self)").
// An empty name gives the abstract type.
func (t *Type) C(name string) string {
	switch t.Kind {
	case Func:
		return t.Sig.C("(*" + name + ")")
	case Pointer:
		inner := t.Elem.C("")
		if name == "" {
			return inner + "*"
		}
		return inner + "* " + name
	}
	s := t.Name
	if t.StructTag {
		s = "struct " + s
	}
	if t.Const {
		s = "const " + s
	}
	if name != "" {
		s += " " + name
	}
	return s
}

// C renders the signature around a declarator, e.g. "(*f)".
func (sig *Signature) C(declarator string) string {
	params := make([]string, len(sig.Params))
	for i, p := range sig.Params {
		params[i] = p.Type.C(p.Name)
	}
	if len(params) == 0 {
		params = []string{"void"}
	}
	return sig.Returns.C("") + " " + declarator + "(" + strings.Join(params, ", ") + ")"
}

// Walk calls f for t and every type it contains.
func (t *Type) Walk(f func(*Type)) {
	f(t)
	if t.Elem != nil {
		t.Elem.Walk(f)
	}
	if t.Sig != nil {
		t.Sig.Returns.Walk(f)
		for _, p := range t.Sig.Params {
			p.Type.Walk(f)
		}
	}
}
