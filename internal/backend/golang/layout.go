package golang

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"
	"github.com/dlgen/dlgen/internal/backend"
	"github.com/dlgen/dlgen/internal/ir"
)

// A target is a set of Go platforms that share one C data model and one
// rule of the Go compiler for aligning 64-bit integers.
type target struct {
	file       string // the guard file, in Dir
	constraint string // its //go:build expression
	abi        ir.ABI // the C data model of these platforms
	// goInt64Align is where Go aligns int64 and uint64 fields: 4 on every
	// 32-bit GOARCH, even where C aligns them to 8.
	goInt64Align int
}

// targets are the GOARCHes with cgo whose C data model dlgen knows; a
// platform none of them names does not build (unknownFile).
var targets = []target{
	{"layout_64bit.go", "amd64 || arm64 || loong64 || mips64 || mips64le || ppc64 || ppc64le || riscv64 || s390x", ir.ABI64, 8},
	{"layout_386.go", "386 && !windows", ir.ABI32Int64Align4, 4},
	{"layout_32bit_align8.go", "arm || mips || mipsle || (386 && windows)", ir.ABI32Int64Align8, 4},
}

const unknownFile = "layout_unknown.go"

// padding holds, per struct and field, the bytes each target puts before
// the field so that Go's offsets equal C's. Fields with none anywhere are
// absent.
type padding map[*ir.Struct]map[int][]int // field index -> per target

// pads computes the padding of every struct of api on every target. It
// fails where no padding can help: Go placing a field after C does, or C
// padding a struct's end where Go would not.
func pads(api *ir.API) (padding, error) {
	p := padding{}
	for _, s := range api.Structs() {
		for ti, t := range targets {
			c := t.abi.Layout(s)
			goABI := ir.ABI{PtrSize: t.abi.PtrSize, Int64Align: t.goInt64Align}
			off, align := 0, 1
			for i, f := range s.Fields {
				_, a := goABI.SizeAlign(f.Type)
				off = ir.RoundUp(off, a)
				align = max(align, a)
				pad := c.Fields[i].Offset - off
				if pad < 0 {
					return nil, backend.Errorf(f.Pos, "%s.%s: Go puts it %d bytes after C on %s", s.Name, f.Name, -pad, t.constraint)
				}
				if pad > 0 {
					if p[s] == nil {
						p[s] = map[int][]int{}
					}
					if p[s][i] == nil {
						p[s][i] = make([]int, len(targets))
					}
					p[s][i][ti] = pad
				}
				off = c.Fields[i].Offset + c.Fields[i].Size
			}
			if ir.RoundUp(off, align) != c.Size {
				return nil, backend.Errorf(s.Pos, "%s: C pads its end to %d bytes on %s, which Go cannot", s.Name, c.Size, t.constraint)
			}
		}
	}
	return p, nil
}

// padName names the constant that sizes the padding before field i of s.
func padName(s *ir.Struct, i int) string {
	return "pad" + typeName(s.Name) + fieldName(s.Fields[i].Name)
}

// claimPads claims the name of every padding constant.
func (g *gen) claimPads() error {
	for _, s := range g.api.Structs() {
		for i, fd := range s.Fields {
			if _, ok := g.pads[s][i]; ok {
				if err := g.names.claimOwn(padName(s, i), "the padding before "+s.Name+"."+fd.Name); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// padConsts declares every padding constant with its size on target ti
// (-1: zero everywhere, for unknownFile).
func (g *gen) padConsts(f *jen.File, ti int) {
	var defs []jen.Code
	for _, s := range g.api.Structs() {
		for i := range s.Fields {
			if per, ok := g.pads[s][i]; ok {
				n := 0
				if ti >= 0 {
					n = per[ti]
				}
				defs = append(defs, jen.Id(padName(s, i)).Op("=").Lit(n))
			}
		}
	}
	if len(defs) > 0 {
		f.Comment("Bytes C puts before a field where Go's own alignment would not.")
		f.Const().Defs(defs...)
	}
}

// guardFile sizes the padding for t and checks every size and offset of
// its C layout at compile time: a constant index outside [0, 1) breaks
// the build.
func (g *gen) guardFile(ti int) ([]byte, error) {
	t := targets[ti]
	f := newFile()
	f.HeaderComment("//go:build " + t.constraint)
	g.padConsts(f, ti)
	var checks []jen.Code
	checks = append(checks, jen.Var().Id("x").Index(jen.Lit(1)).Struct())
	for _, lc := range g.api.LayoutChecks(t.abi) {
		value := jen.Id(typeName(lc.Struct.Name)).Values()
		if lc.Field == nil {
			checks = append(checks, jen.Id("_").Op("=").Id("x").Index(jen.Qual("unsafe", "Sizeof").Call(value).Op("-").Lit(lc.Size)))
			continue
		}
		checks = append(checks, jen.Id("_").Op("=").Id("x").Index(
			jen.Qual("unsafe", "Offsetof").Call(value.Dot(fieldName(lc.Field.Name))).Op("-").Lit(lc.Offset)))
	}
	f.Comment(fmt.Sprintf("The C layout of the %s model: a constant index", t.abi.Name))
	f.Comment("out of range here means a Go type no longer matches its C struct.")
	f.Func().Id("_").Params().Block(checks...)
	return render(f)
}

// unknownFile stops the build on every platform no target names.
func (g *gen) unknownFile() ([]byte, error) {
	var known []string
	for _, t := range targets {
		known = append(known, "("+t.constraint+")")
	}
	f := newFile()
	f.HeaderComment("//go:build !(" + strings.Join(known, " || ") + ")")
	g.padConsts(f, -1)
	f.Comment("dlgen does not know the C data model of this GOOS/GOARCH, so it cannot")
	f.Comment("promise that these types have the C layout here: the undefined name")
	f.Comment("below stops the build rather than let it succeed wrong.")
	f.Const().Id("_").Op("=").Id("dlgenKnowsNoCLayoutForThisGOARCH")
	return render(f)
}
