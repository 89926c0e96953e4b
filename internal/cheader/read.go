// Package cheader reads a DLPack C header, dlpack.h as upstream or a
// framework ships it, with a real C front end and relates it to the schema:
// Identify names the release it matches and lists every difference from
// dlgen's declarations of that release (dlgen -identify); Additions writes,
// as schema YAML, what it declares that the schema's newest release lacks
// (dlgen -identify -schema-yaml), the start of adding a new upstream release.
//
// The front end is modernc.org/cc/v4, a pure-Go C99 parser and type checker
// that lays structs out for a given target. dlgen runs it in-process, on
// every platform Go builds for, with no C compiler installed, and gets the
// layout on each C data model of ir.ABIs from one parse per model: Linux on
// amd64, 386 and arm stand for them. The header is read as C11 code with
// the system headers it may include replaced by the few declarations
// dlpack.h needs (<stdint.h>, <stddef.h>); the branches it keeps for C++
// (upstream's enum : int32_t) are not read. dlgen's own headers are read
// with their switches off (DLGEN_BACKPORTS=0, DLGEN_NO_LAYOUT_GUARDS): as
// upstream's declarations.
package cheader

import (
	"fmt"
	"os"
	"path"
	"reflect"
	"sort"
	"strings"
	"testing/fstest"

	"github.com/dlgen/dlgen/internal/ir"
	"modernc.org/cc/v4"
)

// Header is what a DLPack header declares, as C reads it.
type Header struct {
	Name    string      // the name Read was given, such as the file's path
	Macros  []*Macro    // the DLPACK_* macros and the include guard, in file order
	Enums   []*Enum     // in file order
	Structs []*Struct   // in file order
	Funcs   []*FuncType // the function-pointer typedefs, in file order
	// Typedefs are the type names declared that are none of the above
	// (a typedef of a scalar, say), in file order.
	Typedefs []string
	// Order names the enums, structs (by Struct.Name) and function-pointer
	// typedefs in the order the header declares them.
	Order []string
}

// Macro is an object-like macro: its integer value, when it has one, and
// its replacement text.
type Macro struct {
	Name    string // such as DLPACK_MAJOR_VERSION
	Text    string // the replacement text, its tokens joined by single spaces
	Value   int64  // the integer value, when Integer
	Integer bool   // whether the macro expands to an integer constant
}

// Enum is a typedef'd enum with its enumerators in order.
type Enum struct {
	Name   string       // the typedef's name
	Values []Enumerator // in declaration order
}

// Enumerator is one named value.
type Enumerator struct {
	Name  string // such as kDLCPU
	Value int64  // as C computes it
}

// Struct is a struct declared by a typedef, a tag or both.
type Struct struct {
	Typedef, Tag string   // "" when absent
	Fields       []*Field // in declaration order
	// Layouts are the struct's layout on each data model, by ir.ABI name.
	Layouts map[string]ir.Layout
}

// Name is the name the schema would give the struct: its typedef, else its tag.
func (s *Struct) Name() string {
	if s.Typedef != "" {
		return s.Typedef
	}
	return s.Tag
}

// Field is a struct member with its type as the schema spells types.
type Field struct {
	Name string   // the member's name
	Type *ir.Type // as the schema would spell it
}

// FuncType is a typedef of a pointer to function.
type FuncType struct {
	Name string        // the typedef's name
	Sig  *ir.Signature // what the pointed-to function returns and takes
}

// targets are the Go platforms whose C data model stands for each of
// ir.ABIs, the kinds of size_t and ptrdiff_t there, and what their C
// compilers predefine that headers may test.
var targets = []struct {
	abi             ir.ABI
	goos, goarch    string
	sizeT, ptrdiffT cc.Kind
	predefined      string
}{
	{ir.ABI64, "linux", "amd64", cc.ULong, cc.Long, "#define __x86_64__ 1\n#define __LP64__ 1\n#define __SIZEOF_POINTER__ 8\n#define __SIZE_TYPE__ unsigned long\n#define __PTRDIFF_TYPE__ long\n"},
	{ir.ABI32Int64Align4, "linux", "386", cc.UInt, cc.Int, "#define __i386__ 1\n#define __SIZEOF_POINTER__ 4\n#define __SIZE_TYPE__ unsigned int\n#define __PTRDIFF_TYPE__ int\n"},
	{ir.ABI32Int64Align8, "linux", "arm", cc.UInt, cc.Int, "#define __arm__ 1\n#define __ARM_EABI__ 1\n#define __SIZEOF_POINTER__ 4\n#define __SIZE_TYPE__ unsigned int\n#define __PTRDIFF_TYPE__ int\n"},
}

// predefined is what every target predefines: C11, and dlgen's own
// switches set so that its headers read as upstream's.
const predefined = "#define __STDC__ 1\n#define __STDC_VERSION__ 201112L\n#define __STDC_HOSTED__ 1\n" +
	"#define DLGEN_BACKPORTS 0\n#define DLGEN_NO_LAYOUT_GUARDS 1\n" +
	"int __predefined_declarator;\n"

// system stands in for the C library headers dlpack.h includes.
var system = map[string]string{
	"stdint.h": `typedef signed char int8_t; typedef short int16_t; typedef int int32_t; typedef long long int64_t;
typedef unsigned char uint8_t; typedef unsigned short uint16_t; typedef unsigned int uint32_t; typedef unsigned long long uint64_t;
typedef __PTRDIFF_TYPE__ intptr_t; typedef __SIZE_TYPE__ uintptr_t;
`,
	"stddef.h": `typedef __SIZE_TYPE__ size_t; typedef __PTRDIFF_TYPE__ ptrdiff_t;
#define NULL ((void*)0)
#define offsetof(type, member) ((size_t)&(((type*)0)->member))
`,
}

// systemDir is where the stand-ins lie in the parser's file system.
const systemDir = "dlgen-system"

// ReadFile reads the header at path.
func ReadFile(path string) (*Header, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Read(path, text)
}

// Read parses text, the header called name. Its error says why the text is
// no DLPack header: not C, or no DLTensor declared.
func Read(name string, text []byte) (*Header, error) {
	h := &Header{Name: name}
	for i, target := range targets {
		abi, err := cc.NewABI(target.goos, target.goarch)
		if err != nil {
			return nil, err
		}
		cfg := &cc.Config{ABI: abi, Header: true, EvalAllMacros: true,
			DefaultSizeT: target.sizeT, DefaultPtrdiffT: target.ptrdiffT, DefaultWcharT: cc.Int}
		ast, err := parse(cfg, name, text, target.predefined)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			if err := h.declarations(ast); err != nil {
				return nil, err
			}
		}
		if err := h.layouts(ast, target.abi); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// parse translates text, the header called name, with cfg: the header's
// own directory and the stand-ins for the system headers are its include
// paths.
func parse(cfg *cc.Config, name string, text []byte, target string) (*cc.AST, error) {
	files := fstest.MapFS{}
	for file, src := range system {
		files[path.Join(systemDir, file)] = &fstest.MapFile{Data: []byte(src)}
	}
	main := "header/" + path.Base(strings.ReplaceAll(name, "\\", "/"))
	files[main] = &fstest.MapFile{Data: text}
	cfg.FS, cfg.IncludePaths, cfg.SysIncludePaths = files, []string{"", "header"}, []string{systemDir}
	ast, err := cc.Translate(cfg, []cc.Source{{Name: "<predefined>", Value: target + predefined}, {Name: main, FS: files}})
	if err != nil {
		return nil, fmt.Errorf("%s: not a C header dlgen can read: %v", name, strings.ReplaceAll(err.Error(), main, name))
	}
	return ast, nil
}

// declarations fills h from the first parse.
func (h *Header) declarations(ast *cc.AST) error {
	consts := constDeclarators(ast.TranslationUnit)
	byTag := map[string]*Struct{}
	for _, n := range ownNodes(ast) {
		switch d := n.node.(type) {
		case *cc.StructOrUnionSpecifier:
			st, ok := d.Type().(*cc.StructType)
			if !ok || st.IsIncomplete() {
				continue
			}
			s := &Struct{Tag: n.name, Fields: fields(st, consts)}
			byTag[n.name] = s
			h.Structs = append(h.Structs, s)
			h.Order = append(h.Order, n.name)
		case *cc.Declarator:
			if d.IsTypename() {
				h.typedef(n.name, d.Type(), byTag, consts)
			}
		}
	}
	h.macros(ast)
	if h.Struct("DLTensor") == nil {
		return fmt.Errorf("%s: no DLPack declarations (it declares no DLTensor)", h.Name)
	}
	return nil
}

// namedNode is a declaration of the header's own, at its position.
type namedNode struct {
	line, col int
	name      string
	node      cc.Node
}

// ownNodes are the header's own declarations, in the order they appear.
func ownNodes(ast *cc.AST) []namedNode {
	var nodes []namedNode
	for name, ns := range ast.Scope.Nodes {
		for _, n := range ns {
			p := n.Position()
			if ownFile(p.Filename) {
				nodes = append(nodes, namedNode{p.Line, p.Column, name, n})
			}
		}
	}
	sort.Slice(nodes, func(i, j int) bool {
		a, b := nodes[i], nodes[j]
		return a.line < b.line || a.line == b.line && (a.col < b.col || a.col == b.col && a.name < b.name)
	})
	return nodes
}

// typedef adds the typedef name of type t: the name of a struct declared
// before it by tag (byTag), or a struct, enum or function pointer type of
// its own, or an other typedef.
func (h *Header) typedef(name string, t cc.Type, byTag map[string]*Struct, consts map[cc.Node]bool) {
	switch t := t.(type) {
	case *cc.StructType:
		tag := tagName(t)
		if s := byTag[tag]; tag != "" && s != nil && s.Typedef == "" {
			s.Typedef = name
			for i := range h.Order {
				if h.Order[i] == tag {
					h.Order[i] = s.Name()
				}
			}
			return
		}
		if t.IsIncomplete() {
			h.Typedefs = append(h.Typedefs, name)
			return
		}
		h.Structs = append(h.Structs, &Struct{Typedef: name, Tag: tag, Fields: fields(t, consts)})
		h.Order = append(h.Order, name)
	case *cc.EnumType:
		e := &Enum{Name: name}
		for _, ev := range t.Enumerators() {
			v, _ := integer(ev.Value())
			e.Values = append(e.Values, Enumerator{Name: ev.Token.SrcStr(), Value: v})
		}
		h.Enums = append(h.Enums, e)
		h.Order = append(h.Order, name)
	case *cc.PointerType:
		if fn, ok := t.Elem().(*cc.FunctionType); ok {
			h.Funcs = append(h.Funcs, &FuncType{Name: name, Sig: signature(fn, consts)})
			h.Order = append(h.Order, name)
			return
		}
		h.Typedefs = append(h.Typedefs, name)
	default:
		h.Typedefs = append(h.Typedefs, name)
	}
}

// macros adds the header's object-like DLPACK_ macros and its include
// guard, in the order they appear.
func (h *Header) macros(ast *cc.AST) {
	var macros []*cc.Macro
	for name, m := range ast.Macros {
		if m.IsFnLike || !strings.HasPrefix(name, "DLPACK_") && !strings.HasSuffix(name, "_H_") || !ownFile(m.Position().Filename) {
			continue
		}
		macros = append(macros, m)
	}
	sort.Slice(macros, func(i, j int) bool {
		a, b := macros[i].Position(), macros[j].Position()
		return a.Line < b.Line || a.Line == b.Line && macros[i].Name.SrcStr() < macros[j].Name.SrcStr()
	})
	for _, m := range macros {
		var text []string
		for _, tok := range m.ReplacementList() {
			text = append(text, tok.SrcStr())
		}
		mac := &Macro{Name: m.Name.SrcStr(), Text: strings.Join(text, " ")}
		mac.Value, mac.Integer = integer(m.Value())
		h.Macros = append(h.Macros, mac)
	}
}

// ownFile reports whether a declaration in file is the header's, not one
// of the stand-ins' or the predefined ones.
func ownFile(file string) bool {
	return file != "" && !strings.HasPrefix(file, "<") && !strings.HasPrefix(file, systemDir+"/")
}

// layouts records the layout of every struct on abi.
func (h *Header) layouts(ast *cc.AST, abi ir.ABI) error {
	for _, s := range h.Structs {
		t := structType(ast, s)
		if t == nil {
			return fmt.Errorf("%s: struct %s is not complete on %s", h.Name, s.Name(), abi.Name)
		}
		l := ir.Layout{Size: int(t.Size()), Align: t.FieldAlign()}
		for i := 0; i < t.NumFields(); i++ {
			f := t.FieldByIndex(i)
			l.Fields = append(l.Fields, ir.FieldLayout{Name: f.Name(), Offset: int(f.Offset()), Size: int(f.Type().Size())})
		}
		if s.Layouts == nil {
			s.Layouts = map[string]ir.Layout{}
		}
		s.Layouts[abi.Name] = l
	}
	return nil
}

// structType finds the type of s in ast, by its tag or its typedef.
func structType(ast *cc.AST, s *Struct) *cc.StructType {
	for _, n := range ast.Scope.Nodes[s.Tag] {
		if sp, ok := n.(*cc.StructOrUnionSpecifier); ok && s.Tag != "" {
			if t, ok := sp.Type().(*cc.StructType); ok && !t.IsIncomplete() {
				return t
			}
		}
	}
	for _, n := range ast.Scope.Nodes[s.Typedef] {
		if d, ok := n.(*cc.Declarator); ok && s.Typedef != "" && d.IsTypename() {
			if t, ok := d.Type().(*cc.StructType); ok && !t.IsIncomplete() {
				return t
			}
		}
	}
	return nil
}

// tagName is the tag of a struct or enum type, "" when it has none.
func tagName(t interface{ Tag() cc.Token }) string {
	tok := t.Tag()
	return tok.SrcStr()
}

func integer(v cc.Value) (int64, bool) {
	switch v := v.(type) {
	case cc.Int64Value:
		return int64(v), true
	case cc.UInt64Value:
		return int64(v), true
	}
	return 0, false
}

func fields(t *cc.StructType, consts map[cc.Node]bool) []*Field {
	var out []*Field
	for i := 0; i < t.NumFields(); i++ {
		f := t.FieldByIndex(i)
		out = append(out, &Field{Name: f.Name(), Type: irType(f.Type(), consts[f.Declarator()], consts)})
	}
	return out
}

func signature(fn *cc.FunctionType, consts map[cc.Node]bool) *ir.Signature {
	sig := &ir.Signature{Returns: irType(fn.Result(), false, consts)}
	for _, p := range fn.Parameters() {
		if p.Type().Kind() == cc.Void && p.Name() == "" {
			continue // f(void)
		}
		c := consts[p.Declarator] || p.AbstractDeclarator != nil && consts[p.AbstractDeclarator]
		sig.Params = append(sig.Params, &ir.Param{Name: p.Name(), Type: irType(p.Type(), c, consts)})
	}
	return sig
}

// builtin spells the C types that have no typedef name.
var builtin = map[cc.Kind]string{
	cc.Void: "void", cc.Char: "char", cc.SChar: "signed char", cc.UChar: "unsigned char",
	cc.Short: "short", cc.UShort: "unsigned short", cc.Int: "int", cc.UInt: "unsigned",
	cc.Long: "long", cc.ULong: "unsigned long", cc.LongLong: "long long", cc.ULongLong: "unsigned long long",
	cc.Float: "float", cc.Double: "double", cc.Bool: "_Bool",
}

// irType spells t as the schema does; baseConst says that the declaration
// specifiers (the innermost type) are const.
func irType(t cc.Type, baseConst bool, consts map[cc.Node]bool) *ir.Type {
	if td := t.Typedef(); td != nil {
		name := td.Name()
		kind := ir.Named
		if _, ok := ir.Scalars[name]; ok {
			kind = ir.Scalar
		}
		return &ir.Type{Kind: kind, Name: name, Const: baseConst}
	}
	switch t := t.(type) {
	case *cc.PointerType:
		if fn, ok := t.Elem().(*cc.FunctionType); ok {
			return &ir.Type{Kind: ir.Func, Sig: signature(fn, consts)}
		}
		return &ir.Type{Kind: ir.Pointer, Elem: irType(t.Elem(), baseConst, consts)}
	case *cc.StructType:
		return &ir.Type{Kind: ir.Named, Name: tagName(t), StructTag: true, Const: baseConst}
	case *cc.EnumType:
		return &ir.Type{Kind: ir.Named, Name: "enum " + tagName(t), Const: baseConst}
	}
	name, ok := builtin[t.Kind()]
	if !ok {
		name = t.String()
	}
	kind := ir.Named
	if _, ok := ir.Scalars[name]; ok {
		kind = ir.Scalar
	}
	return &ir.Type{Kind: kind, Name: name, Const: baseConst}
}

// constDeclarators finds, in the whole tree, the declarators of struct
// members and parameters whose declaration specifiers say const (the
// const of "const int64_t* shape"), which cc's types do not keep.
func constDeclarators(root *cc.TranslationUnit) map[cc.Node]bool {
	out := map[cc.Node]bool{}
	seen := map[uintptr]bool{}
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		if v.Kind() == reflect.Pointer {
			if v.IsNil() || seen[v.Pointer()] {
				return
			}
			seen[v.Pointer()] = true
			switch n := v.Interface().(type) {
			case *cc.StructDeclaration:
				if specifiersConst(n.SpecifierQualifierList) {
					for l := n.StructDeclaratorList; l != nil; l = l.StructDeclaratorList {
						if l.StructDeclarator != nil && l.StructDeclarator.Declarator != nil {
							out[l.StructDeclarator.Declarator] = true
						}
					}
				}
			case *cc.ParameterDeclaration:
				if declarationConst(n.DeclarationSpecifiers) {
					if n.Declarator != nil {
						out[n.Declarator] = true
					}
					if n.AbstractDeclarator != nil {
						out[n.AbstractDeclarator] = true
					}
				}
			}
			v = v.Elem()
		}
		switch v.Kind() {
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				if v.Type().Field(i).IsExported() {
					walk(v.Field(i))
				}
			}
		case reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem())
			}
		}
	}
	walk(reflect.ValueOf(root))
	return out
}

func specifiersConst(l *cc.SpecifierQualifierList) bool {
	for ; l != nil; l = l.SpecifierQualifierList {
		if l.TypeQualifier != nil && l.TypeQualifier.Case == cc.TypeQualifierConst {
			return true
		}
	}
	return false
}

func declarationConst(l *cc.DeclarationSpecifiers) bool {
	for ; l != nil; l = l.DeclarationSpecifiers {
		if l.TypeQualifier != nil && l.TypeQualifier.Case == cc.TypeQualifierConst {
			return true
		}
	}
	return false
}

// Struct returns the struct the schema would call name, or nil.
func (h *Header) Struct(name string) *Struct { return find(h.Structs, name, (*Struct).Name) }

// Enum returns the enum called name, or nil.
func (h *Header) Enum(name string) *Enum {
	return find(h.Enums, name, func(e *Enum) string { return e.Name })
}

// Func returns the function-pointer typedef called name, or nil.
func (h *Header) Func(name string) *FuncType {
	return find(h.Funcs, name, func(f *FuncType) string { return f.Name })
}

// Macro returns the macro called name, or nil.
func (h *Header) Macro(name string) *Macro {
	return find(h.Macros, name, func(m *Macro) string { return m.Name })
}

func find[T any](items []*T, name string, nameOf func(*T) string) *T {
	for _, x := range items {
		if nameOf(x) == name {
			return x
		}
	}
	return nil
}
