package ir

// ABI is one C data model as far as DLPack's structs can tell: the size of
// a pointer and the alignment a 64-bit integer gets inside a struct. Every
// other member of every DLPack struct is an integer of at most 4 bytes with
// its natural alignment on each of them. Which compilers and targets follow
// a model is a fact of each language's backend (preprocessor conditions in
// the C backend, GOARCH lists in the Go one), not of the IR.
type ABI struct {
	Name       string // for reports, such as "32-bit/int64-align-8"
	PtrSize    int    // bytes of a pointer
	Int64Align int    // alignment of 64-bit integers inside structs
}

var (
	// ABI64 is every target with 64-bit pointers: LP64 Unix (x86-64,
	// AArch64, POWER, z/Architecture, RISC-V, MIPS n64, LoongArch, SPARC V9)
	// and LLP64 Windows give DLPack the same layout.
	ABI64 = ABI{Name: "64-bit", PtrSize: 8, Int64Align: 8}
	// ABI32Int64Align4 is 32-bit with 64-bit integers only 4-byte aligned
	// inside structs: the i386 System V ABI (Linux, the BSDs, macOS) and
	// Apple's 32-bit ARM (APCS).
	ABI32Int64Align4 = ABI{Name: "32-bit/int64-align-4", PtrSize: 4, Int64Align: 4}
	// ABI32Int64Align8 is 32-bit with 64-bit integers 8-byte aligned: x86
	// on Windows (MSVC, mingw, Cygwin), ARM AAPCS, MIPS o32 and n32,
	// PowerPC, RISC-V, SPARC, WebAssembly, x32 and AArch64 ILP32.
	ABI32Int64Align8 = ABI{Name: "32-bit/int64-align-8", PtrSize: 4, Int64Align: 8}
	// ABIs lists every model that backends guard.
	ABIs = []ABI{ABI64, ABI32Int64Align4, ABI32Int64Align8}
)

// Layout is the memory layout of a struct on one ABI.
type Layout struct {
	Size, Align int           // of the whole struct, in bytes
	Fields      []FieldLayout // in declaration order
}

// FieldLayout is the placement of one field.
type FieldLayout struct {
	Name         string // the field's name
	Offset, Size int    // in bytes from the start of the struct
}

// Layout computes the layout of s on abi. s must come from an API, so that
// its named types are resolved.
func (abi ABI) Layout(s *Struct) Layout {
	var l Layout
	l.Align = 1
	for _, f := range s.Fields {
		size, align := abi.SizeAlign(f.Type)
		l.Size = RoundUp(l.Size, align)
		l.Fields = append(l.Fields, FieldLayout{Name: f.Name, Offset: l.Size, Size: size})
		l.Size += size
		l.Align = max(l.Align, align)
	}
	l.Size = RoundUp(l.Size, l.Align)
	return l
}

// SizeAlign returns the size and in-struct alignment of t on abi.
func (abi ABI) SizeAlign(t *Type) (size, align int) {
	switch t.Kind {
	case Pointer, Func:
		return abi.PtrSize, abi.PtrSize
	case Scalar:
		size := Scalars[t.Name].Size
		if size == 8 {
			return 8, abi.Int64Align
		}
		return size, size
	}
	switch d := t.Decl.(type) {
	case *Struct:
		l := abi.Layout(d)
		return l.Size, l.Align
	case *Enum:
		return 4, 4 // every schema enum fits in int, which C uses for it
	case *FuncType:
		return abi.PtrSize, abi.PtrSize
	}
	panic("ir: unresolved type " + t.Name)
}

// RoundUp rounds n up to a multiple of align.
func RoundUp(n, align int) int { return (n + align - 1) / align * align }

// LayoutCheck is one fact of a struct's C layout on one data model: its
// size (Field nil) or one field's offset and size. Every binding guards
// them (C and Go at compile time, Python at import, Rust in tests) and the
// ABI diff compares them between releases, all from LayoutChecks.
type LayoutCheck struct {
	Struct *Struct // the struct checked
	Field  *Field  // nil for the struct's size
	Offset int     // the field's offset; 0 for the size
	Size   int     // the field's size, or the struct's
	Align  int     // the struct's alignment; 0 for a field
}

// LayoutChecks lists, struct by struct in declaration order, each
// struct's size (with its alignment) and then every field's offset and size
// on abi.
func (a *API) LayoutChecks(abi ABI) []LayoutCheck {
	var out []LayoutCheck
	for _, s := range a.Structs() {
		l := abi.Layout(s)
		out = append(out, LayoutCheck{Struct: s, Size: l.Size, Align: l.Align})
		for i, f := range l.Fields {
			out = append(out, LayoutCheck{Struct: s, Field: s.Fields[i], Offset: f.Offset, Size: f.Size})
		}
	}
	return out
}
