package ir

// ABI is a C data model that dlgen computes layouts for.
type ABI struct {
	Name       string
	PtrSize    int
	Int64Align int      // alignment of 64-bit integers inside structs
	GOARCH     []string // Go architectures that follow this ABI
	// CCondition is a preprocessor condition true exactly on this ABI.
	CCondition string
}

var (
	// LP64 is the 64-bit data model of x86-64 and AArch64.
	LP64 = ABI{
		Name: "LP64", PtrSize: 8, Int64Align: 8,
		GOARCH:     []string{"amd64", "arm64"},
		CCondition: "defined(__x86_64__) || defined(__aarch64__) || defined(_M_X64) || defined(_M_ARM64)",
	}
	// ILP32 is the i386 System V data model, where 64-bit integers are only
	// 4-byte aligned inside structs.
	ILP32 = ABI{
		Name: "ILP32", PtrSize: 4, Int64Align: 4,
		GOARCH:     []string{"386"},
		CCondition: "defined(__i386__) || defined(_M_IX86)",
	}
	// ABIs lists every ABI that backends guard.
	ABIs = []ABI{LP64, ILP32}
)

// Layout is the memory layout of a struct on one ABI.
type Layout struct {
	Size, Align int
	Fields      []FieldLayout
}

// FieldLayout is the placement of one field.
type FieldLayout struct {
	Name         string
	Offset, Size int
}

// Layout computes the layout of s on abi. s must come from an API, so that
// its named types are resolved.
func (abi ABI) Layout(s *Struct) Layout {
	var l Layout
	l.Align = 1
	for _, f := range s.Fields {
		size, align := abi.sizeAlign(f.Type)
		l.Size = roundUp(l.Size, align)
		l.Fields = append(l.Fields, FieldLayout{Name: f.Name, Offset: l.Size, Size: size})
		l.Size += size
		l.Align = max(l.Align, align)
	}
	l.Size = roundUp(l.Size, l.Align)
	return l
}

// SizeAlign returns the size and in-struct alignment of t on abi.
func (abi ABI) sizeAlign(t *Type) (size, align int) {
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

func roundUp(n, align int) int { return (n + align - 1) / align * align }
