package golang

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"
	"github.com/dlgen/dlgen/internal/ir"
)

// rulesFile renders rules.go: the rules a consumer checks before it
// touches a foreign tensor, as tables a hand-written checker (dltensor's)
// reads: the dimension limit, when each pointer field may be NULL, the
// facts of device types and type codes, the names of element types, and
// the message of every check. Each part is there when the schema has it.
func (g *gen) rulesFile() ([]byte, error) {
	f := newFile()
	v := g.api.Version()
	f.Comment(fmt.Sprintf("The rules of DLPack v%s a consumer checks before it touches a foreign", v))
	f.Comment("tensor, as data from the schema; dlgen's docs/rules.md says how a checker")
	f.Comment("reads them, in which order, and what the limits of the address space are.")
	f.Line()
	if g.api.Rules.MaxDims > 0 {
		if err := g.names.claimOwn("MaxDims", "rules.max_ndim"); err != nil {
			return nil, err
		}
		f.Comment("MaxDims is the most dimensions a tensor may have: dlgen's limit, as DLPack")
		f.Comment("sets none.")
		f.Const().Id("MaxDims").Op("=").Lit(g.api.Rules.MaxDims)
	}
	if err := g.nullables(f); err != nil {
		return nil, err
	}
	g.enumRules(f)
	if err := g.dataTypeNames(f); err != nil {
		return nil, err
	}
	if err := g.messages(f); err != nil {
		return nil, err
	}
	return render(f)
}

// nullables declares the Nullable type and one value per nullable field.
func (g *gen) nullables(f *jen.File) error {
	var vars []jen.Code
	for _, s := range g.api.Structs() {
		for _, fd := range s.Fields {
			n := fd.Nullable
			if n.When == ir.NullNever {
				continue
			}
			name := typeName(s.Name) + fieldName(fd.Name) + "Nullable"
			if err := g.names.claimOwn(name, s.Name+"."+fd.Name+" nullable"); err != nil {
				return err
			}
			values := []jen.Code{jen.Id("When").Op(":").Id(nullWhenName(n.When))}
			what := fmt.Sprintf("%s is when %s.%s may be NULL: %s", name, s.Name, fd.Name, nullWhenText(n.When))
			if c := n.Changed; c != nil {
				values = append(values,
					jen.Id("Changed").Op(":").Index(jen.Lit(2)).Uint32().Values(jen.Lit(c.In.Major), jen.Lit(c.In.Minor)),
					jen.Id("Before").Op(":").Id(nullWhenName(c.From)))
				what += fmt.Sprintf("; in tensors older than %s, %s", c.In, nullWhenText(c.From))
			}
			vars = append(vars, comments(what+".").Id(name).Op("=").Id("Nullable").Values(values...))
		}
	}
	if len(vars) == 0 {
		return nil
	}
	own := []string{"Nullable", "NullWhen"}
	for _, w := range ir.NullWhens() {
		own = append(own, nullWhenName(w))
	}
	for _, name := range own {
		if err := g.names.claimOwn(name, "rules "+name); err != nil {
			return err
		}
	}
	f.Comment("NullWhen says when a pointer field may be NULL.")
	f.Type().Id("NullWhen").Uint8()
	var consts []jen.Code
	for i, w := range ir.NullWhens() {
		c := jen.Id(nullWhenName(w))
		if i == 0 {
			c.Id("NullWhen").Op("=").Iota()
		}
		consts = append(consts, comments(nullWhenName(w)+": "+nullWhenText(w)+".").Add(c))
	}
	f.Const().Defs(consts...)
	f.Comment("Nullable says when a pointer field may be NULL, in a tensor of a given")
	f.Comment("version: When, or Before in tensors older than Changed, a {major, minor}")
	f.Comment("version compared as one (when not zero).")
	f.Type().Id("Nullable").Struct(
		jen.Id("When").Id("NullWhen").Comment("in tensors of Changed or newer"),
		jen.Id("Changed").Index(jen.Lit(2)).Uint32().Comment("the {major, minor} version the rule changed in; zero if never"),
		jen.Id("Before").Id("NullWhen").Comment("in tensors older than Changed"),
	)
	f.Var().Defs(vars...)
	return nil
}

func nullWhenName(w ir.NullWhen) string {
	return [...]string{"NullNever", "NullAlways", "NullIfNdimZero", "NullIfNoElements"}[w]
}

// nullWhenText says when NULL is allowed.
func nullWhenText(w ir.NullWhen) string {
	return [...]string{"never", "always", "only when the tensor has no dimensions", "only when the tensor has no elements"}[w]
}

// enumRules declares the facts of device types and type codes as methods.
func (g *gen) enumRules(f *jen.File) {
	if e := g.api.Enum.DeviceType; e != nil {
		name := typeName(e.Name)
		var host []jen.Code
		for _, ev := range e.Values {
			if ev.HostReadable {
				host = append(host, jen.Id(enumeratorName(e.Name, ev.Name)))
			}
		}
		f.Comment("HostReadable reports whether the CPU reads memory of device type v directly;")
		f.Comment("memory of any other type, known or not, may be held but never read.")
		f.Func().Params(jen.Id("v").Id(name)).Id("HostReadable").Params().Bool().Block(switchTrue(host)...)
	}
	if e := g.api.Enum.DataTypeCode; e != nil {
		name := typeName(e.Name)
		var opaque []jen.Code
		byWidth := map[int][]jen.Code{}
		var widthOrder []int
		for _, ev := range e.Values {
			id := jen.Id(enumeratorName(e.Name, ev.Name))
			if ev.Opaque {
				opaque = append(opaque, id)
			}
			if ev.Bits != 0 {
				if byWidth[ev.Bits] == nil {
					widthOrder = append(widthOrder, ev.Bits)
				}
				byWidth[ev.Bits] = append(byWidth[ev.Bits], id)
			}
		}
		var widths []jen.Code
		for _, w := range widthOrder {
			widths = append(widths, jen.Case(byWidth[w]...).Block(jen.Return(jen.Lit(w))))
		}
		f.Comment("Addressable reports whether elements of code v can be addressed: a code")
		f.Comment("this release defines that is not opaque.")
		f.Func().Params(jen.Id("v").Id(name)).Id("Addressable").Params().Bool().Block(addressable(opaque)...)
		f.Comment("FixedBits is the only width DLPack allows for code v, 0 if any.")
		f.Func().Params(jen.Id("v").Id(name)).Id("FixedBits").Params().Uint8().Block(
			jen.Switch(jen.Id("v")).Block(widths...),
			jen.Return(jen.Lit(0)))
	}
}

// switchTrue is a function body returning whether v is one of cases.
func switchTrue(cases []jen.Code) []jen.Code {
	if len(cases) == 0 {
		return []jen.Code{jen.Return(jen.False())}
	}
	return []jen.Code{jen.Switch(jen.Id("v")).Block(jen.Case(cases...).Block(jen.Return(jen.True()))), jen.Return(jen.False())}
}

func addressable(opaque []jen.Code) []jen.Code {
	if len(opaque) == 0 {
		return []jen.Code{jen.Return(jen.Id("v").Dot("Known").Call())}
	}
	return []jen.Code{
		jen.Switch(jen.Id("v")).Block(jen.Case(opaque...).Block(jen.Return(jen.False()))),
		jen.Return(jen.Id("v").Dot("Known").Call()),
	}
}

// dtypeStruct is the struct whose field holds the dtype_code enum
// (DLDataType), if it also has bits and lanes fields.
func (g *gen) dtypeStruct() *ir.Struct {
	code := g.api.Enum.DataTypeCode
	for _, s := range g.api.Structs() {
		var holds, bits, lanes bool
		for _, fd := range s.Fields {
			holds = holds || code != nil && fd.Holds == ir.Decl(code)
			bits = bits || fd.Name == "bits"
			lanes = lanes || fd.Name == "lanes"
		}
		if holds && bits && lanes {
			return s
		}
	}
	return nil
}

// dataTypeNames declares the dtype names with DataType's String, the
// parser of the same names and the list of them.
func (g *gen) dataTypeNames(f *jen.File) error {
	names := g.api.DataTypeNames()
	s := g.dtypeStruct()
	if len(names) == 0 || s == nil {
		return nil
	}
	for _, id := range []string{"ParseDataType", "DataTypeNames", "dataTypeNames"} {
		if err := g.names.claimOwn(id, "dtype names "+id); err != nil {
			return err
		}
	}
	dt, code := typeName(s.Name), typeName(g.api.Enum.DataTypeCode.Name)
	var rows []jen.Code
	for _, n := range names {
		var ev *ir.Enumerator
		for _, e := range g.api.Enum.DataTypeCode.Values {
			if e.Value == n.Code {
				ev = e
			}
		}
		rows = append(rows, jen.Values(jen.Lit(n.Name), jen.Id(enumeratorName(g.api.Enum.DataTypeCode.Name, ev.Name)), jen.Lit(n.Bits)))
	}
	f.Comment(fmt.Sprintf("dataTypeNames are the names of element types in DLPack v%s, in the order", g.api.Version()))
	f.Comment("of the type codes.")
	f.Var().Id("dataTypeNames").Op("=").Index(jen.Op("...")).Struct(
		jen.Id("name").String(),
		jen.Id("code").Id(code),
		jen.Id("bits").Uint8(),
	).Custom(multiline, rows...)

	dataTypeString(f, dt)
	g.parseDataType(f, dt)
	return nil
}

// dataTypeString declares DataType's String (dt) and DataTypeNames.
func dataTypeString(f *jen.File, dt string) {
	f.Comment("String returns the dtype's name (\"float32\", \"bfloat16\", \"float8_e4m3fn\",")
	f.Comment("\"bool\"), followed by x and the lane count for several lanes (\"float32x4\");")
	f.Comment("a dtype without a name is \"" + dt + "(code=C, bits=B, lanes=L)\".")
	itoa := func(x jen.Code) *jen.Statement { return jen.Qual("strconv", "Itoa").Call(jen.Int().Call(x)) }
	f.Func().Params(jen.Id("d").Id(dt)).Id("String").Params().String().Block(
		jen.For(jen.List(jen.Id("_"), jen.Id("n")).Op(":=").Range().Id("dataTypeNames")).Block(
			jen.Switch().Block(
				jen.Case(jen.Id("n").Dot("code").Op("!=").Id("d").Dot("Code").Op("||").Id("n").Dot("bits").Op("!=").Id("d").Dot("Bits").Op("||").Id("d").Dot("Lanes").Op("==").Lit(0)),
				jen.Case(jen.Id("d").Dot("Lanes").Op("==").Lit(1)).Block(jen.Return(jen.Id("n").Dot("name"))),
				jen.Default().Block(jen.Return(jen.Id("n").Dot("name").Op("+").Lit("x").Op("+").Add(itoa(jen.Id("d").Dot("Lanes"))))),
			),
		),
		jen.Return(jen.Lit(dt+"(code=").Op("+").Add(itoa(jen.Id("d").Dot("Code"))).Op("+").Lit(", bits=").Op("+").Add(itoa(jen.Id("d").Dot("Bits"))).
			Op("+").Lit(", lanes=").Op("+").Add(itoa(jen.Id("d").Dot("Lanes"))).Op("+").Lit(")")),
	)

	f.Comment("DataTypeNames lists the name of every element type, as String gives it for")
	f.Comment("one lane, in the order of the type codes.")
	f.Func().Id("DataTypeNames").Params().Index().String().Block(
		jen.Id("out").Op(":=").Make(jen.Index().String(), jen.Len(jen.Id("dataTypeNames"))),
		jen.For(jen.List(jen.Id("i"), jen.Id("n")).Op(":=").Range().Id("dataTypeNames")).Block(
			jen.Id("out").Index(jen.Id("i")).Op("=").Id("n").Dot("name"),
		),
		jen.Return(jen.Id("out")),
	)

}

// parseDataType declares ParseDataType, the parser of String's names.
func (g *gen) parseDataType(f *jen.File, dt string) {
	unknown := jen.Qual("fmt", "Errorf").Call(jen.Lit("unknown dtype name %q"), jen.Id("s"))
	if g.message("dtype_name") != nil {
		unknown = jen.Qual("errors", "New").Call(jen.Id(ruleName("dtype_name")).Dot("Format").Call(
			jen.Id("s"), jen.Qual("strings", "Join").Call(jen.Id("DataTypeNames").Call(), jen.Lit(", "))))
	}
	f.Comment("ParseDataType returns the dtype a name of String stands for: one of")
	f.Comment("DataTypeNames, optionally followed by x and a lane count (\"float32x4\").")
	f.Func().Id("ParseDataType").Params(jen.Id("s").String()).Params(jen.Id(dt), jen.Error()).Block(
		jen.For(jen.List(jen.Id("_"), jen.Id("n")).Op(":=").Range().Id("dataTypeNames")).Block(
			jen.Id("lanes").Op(":=").Uint64().Call(jen.Lit(1)),
			jen.If(jen.Id("s").Op("!=").Id("n").Dot("name")).Block(
				jen.List(jen.Id("count"), jen.Id("ok")).Op(":=").Qual("strings", "CutPrefix").Call(jen.Id("s"), jen.Id("n").Dot("name").Op("+").Lit("x")),
				jen.If(jen.Op("!").Id("ok").Op("||").Id("count").Op("==").Lit("").Op("||").Id("count").Index(jen.Lit(0)).Op("==").LitRune('0').Op("||").
					Qual("strings", "TrimLeft").Call(jen.Id("count"), jen.Lit("0123456789")).Op("!=").Lit("")).Block(jen.Continue()),
				jen.Var().Err().Error(),
				jen.If(jen.List(jen.Id("lanes"), jen.Err()).Op("=").Qual("strconv", "ParseUint").Call(jen.Id("count"), jen.Lit(10), jen.Lit(16)),
					jen.Err().Op("!=").Nil()).Block(jen.Continue()),
			),
			jen.Return(jen.Id(dt).Values(jen.Dict{
				jen.Id("Code"):  jen.Id("n").Dot("code"),
				jen.Id("Bits"):  jen.Id("n").Dot("bits"),
				jen.Id("Lanes"): jen.Uint16().Call(jen.Id("lanes")),
			}), jen.Nil()),
		),
		jen.Return(jen.Id(dt).Values(), unknown),
	)
}

// message returns the message of check id, or nil.
func (g *gen) message(id string) *ir.Message {
	for _, m := range g.api.Rules.Messages {
		if m.Check.ID == id {
			return m
		}
	}
	return nil
}

// multiline lays a composite literal out one element per line.
var multiline = jen.Options{Open: "{", Close: "}", Separator: ",", Multi: true}

// ruleName is the Go constant of check id: dtype_name -> RuleDtypeName.
func ruleName(id string) string { return "Rule" + camel(id) }

// messages declares Rule, a constant per check and the message table.
func (g *gen) messages(f *jen.File) error {
	msgs := g.api.Rules.Messages
	if len(msgs) == 0 {
		return nil
	}
	for _, id := range []string{"Rule", "NumRules", "rules"} {
		if err := g.names.claimOwn(id, "rules "+id); err != nil {
			return err
		}
	}
	f.Comment("Rule is one check of a tensor: an import check, in the order a consumer")
	f.Comment("makes them, or a check of a producer or reading API. Its message is the")
	f.Comment("same words in every language dlgen writes.")
	f.Type().Id("Rule").Uint8()
	var consts, rows []jen.Code
	for i, m := range msgs {
		name := ruleName(m.Check.ID)
		if err := g.names.claimOwn(name, "rule "+m.Check.ID); err != nil {
			return err
		}
		c := comments(name + ": " + m.Check.Purpose + ".").Id(name)
		if i == 0 {
			c.Id("Rule").Op("=").Iota()
		}
		consts = append(consts, c)
		var params []jen.Code
		for _, p := range m.Check.Params {
			params = append(params, jen.Lit(p))
		}
		rows = append(rows, jen.Values(jen.Lit(m.Check.ID), jen.Lit(m.Python), jen.Lit(m.Text), jen.Lit(goFormat(m)),
			jen.Index().String().Values(params...)))
	}
	f.Const().Defs(consts...)
	f.Comment("NumRules is the number of rules; every Rule is below it.")
	f.Const().Id("NumRules").Op("=").Lit(len(msgs))
	f.Var().Id("rules").Op("=").Index(jen.Id("NumRules")).Struct(
		jen.List(jen.Id("id"), jen.Id("python"), jen.Id("text"), jen.Id("format")).String(),
		jen.Id("params").Index().String(),
	).Custom(multiline, rows...)
	r := func() *jen.Statement { return jen.Id("rules").Index(jen.Id("r")) }
	f.Comment("String is the rule's id, as messages and the conformance corpus name it.")
	f.Func().Params(jen.Id("r").Id("Rule")).Id("String").Params().String().Block(jen.Return(r().Dot("id")))
	f.Comment("Python is the exception a Python module raises when the rule is broken.")
	f.Func().Params(jen.Id("r").Id("Rule")).Id("Python").Params().String().Block(jen.Return(r().Dot("python")))
	f.Comment("Text is the rule's message, with a {param} placeholder per parameter.")
	f.Func().Params(jen.Id("r").Id("Rule")).Id("Text").Params().String().Block(jen.Return(r().Dot("text")))
	f.Comment("Params names the parameters of the message, in the order Format takes them.")
	f.Func().Params(jen.Id("r").Id("Rule")).Id("Params").Params().Index().String().Block(
		jen.Return(jen.Append(jen.Index().String().Call(jen.Nil()), r().Dot("params").Op("..."))))
	f.Comment("Format renders the message with one argument per parameter, in Params")
	f.Comment("order: integers in decimal, strings as they are.")
	f.Func().Params(jen.Id("r").Id("Rule")).Id("Format").Params(jen.Id("args").Op("...").Interface()).String().Block(
		jen.Return(jen.Qual("fmt", "Sprintf").Call(r().Dot("format"), jen.Id("args").Op("..."))))
	return nil
}

// goFormat is the message as a fmt format: %[i]v for the i-th parameter.
func goFormat(m *ir.Message) string {
	var b strings.Builder
	for _, p := range m.Parts() {
		if p.Text != "" {
			b.WriteString(strings.ReplaceAll(p.Text, "%", "%%"))
			continue
		}
		fmt.Fprintf(&b, "%%[%d]v", p.Param+1)
	}
	return b.String()
}
