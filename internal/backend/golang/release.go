package golang

import (
	"fmt"

	"github.com/dave/jennifer/jen"
	"github.com/dlgen/dlgen/internal/ir"
)

// releaseFile renders release.go: the package's release as one value,
// Release, whose methods answer from the package's own declarations and
// rules. A runtime that speaks every release (dlgen's dltensor, through
// dltensor.WithRelease) reads it, so that its exports carry this release's
// version and flags and its imports follow these rules. Nil when the
// schema lacks the enums of device types and type codes, which it needs.
func (g *gen) releaseFile() ([]byte, error) {
	codes, devices := g.api.Enum.DataTypeCode, g.api.Enum.DeviceType
	if codes == nil || devices == nil {
		return nil, nil
	}
	for _, id := range []string{"Release", "release"} {
		if err := g.names.claimOwn(id, "the release "+id); err != nil {
			return nil, err
		}
	}
	v := g.api.Version()
	major, minor := jen.Lit(v.Major), jen.Lit(v.Minor)
	if m := g.api.Versions; m.Major != nil && m.Minor != nil {
		major, minor = jen.Id(macroName(m.Major.Name)), jen.Id(macroName(m.Minor.Name))
	}
	var flags []jen.Code
	for _, d := range g.api.Decls {
		if fl, ok := d.(*ir.Flags); ok {
			for _, b := range fl.Bits {
				flags = append(flags, jen.Id(macroName(b.Name)))
			}
		}
	}
	flagSet := jen.Lit(0)
	if len(flags) > 0 {
		union := jen.Add(flags[0])
		for _, f := range flags[1:] {
			union.Op("|").Add(f)
		}
		flagSet = jen.Uint64().Call(union)
	}
	r := jen.Id("release")
	f := newFile()
	f.Comment(fmt.Sprintf("Release is DLPack %s, this package's release, told to a runtime that speaks", v.Title()))
	f.Comment("every release: dlgen's dltensor.WithRelease(dlpack.Release) makes exports carry")
	f.Comment("this release's version and flags and imports follow this package's rules.")
	f.Var().Id("Release").Id("release")
	f.Line()
	f.Comment("release answers from this package's declarations and rules.")
	f.Type().Id("release").Struct()
	f.Line()
	f.Comment("DLPackRelease is the release as dlgen's schema names it.")
	f.Func().Params(r.Clone()).Id("DLPackRelease").Params().String().Block(jen.Return(jen.Lit(v.String())))
	f.Line()
	f.Comment("DLPackVersion is the release's version, which a versioned tensor carries;")
	f.Comment("versioned is false for a release before DLPack 1.0, which has no versioned tensor.")
	f.Func().Params(r.Clone()).Id("DLPackVersion").Params().Params(jen.List(jen.Id("major"), jen.Id("minor")).Uint32(), jen.Id("versioned").Bool()).Block(
		jen.Return(major, minor, jen.Lit(g.api.Versioned())))
	f.Line()
	f.Comment("DLPackFlags is every flag bit the release defines.")
	f.Func().Params(r.Clone()).Id("DLPackFlags").Params().Uint64().Block(jen.Return(flagSet))
	f.Line()
	f.Comment("DLPackDataTypeCode says what the rules say of type code c.")
	f.Func().Params(r.Clone()).Id("DLPackDataTypeCode").Params(jen.Id("c").Uint8()).Params(
		jen.List(jen.Id("known"), jen.Id("addressable")).Bool(), jen.Id("fixedBits").Uint8()).Block(
		jen.Id("v").Op(":=").Id(typeName(codes.Name)).Call(jen.Id("c")),
		jen.Return(jen.Id("v").Dot("Known").Call(), jen.Id("v").Dot("Addressable").Call(), jen.Id("v").Dot("FixedBits").Call()))
	f.Line()
	f.Comment("DLPackHostReadable reports whether the CPU reads memory of device type d.")
	f.Func().Params(r.Clone()).Id("DLPackHostReadable").Params(jen.Id("d").Int32()).Bool().Block(
		jen.Return(jen.Id(typeName(devices.Name)).Call(jen.Id("d")).Dot("HostReadable").Call()))
	return render(f)
}
