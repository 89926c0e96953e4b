package rust

import (
	"fmt"
	"strings"

	"github.com/dlgen/dlgen/internal/ir"
)

// The import rules, as data: the view of rust-rules.rs.tmpl, from the IR
// alone. Facts sit on the declarations they are about (when a field may
// be NULL, which device types the CPU reads, which type codes allow one
// width or cannot be addressed), the rest is api.Rules: the dimension
// limit and the message of every check. The hand-written checker
// (internal/backend/rust/runtime/check.rs) and the readers of the tables (internal/backend/rust/runtime/rule_types.rs)
// know no fact of their own; the limits of the address space are the
// template's definition against the pointer width, docs/rules.md's.

// rules is what rust-rules.rs.tmpl renders.
type rules struct {
	Version      string // the consumer's (major, minor), by the version macros
	MaxDims      int
	Nullables    []nullableStruct
	DeviceType   string   // the device_type enum
	HostReadable []string // its host-readable enumerators
	Streamless   []string // its enumerators without streams
	TypeCode     string   // the dtype_code enum
	Opaque       []string // its opaque enumerators
	FixedBits    []fixedBits
	DataTypes    []dataType // rows of the dtype-name table
	ReadOnly     string     // flag constants, by role
	IsCopied     string
	Padded       string // "Some(flag)", or "None" where the release has none
	Checks       []check
	Python       protocol
}

// nullableStruct holds the nullable rules of one struct's fields.
type nullableStruct struct {
	Struct string
	Fields []nullableField
}

// nullableField is one field's rule: When, and Since and Before where an
// older release allowed more (Since is "" where none did).
type nullableField struct{ Doc, Const, When, Since, Before string }

// fixedBits is one type code that allows one width.
type fixedBits struct {
	Code string
	Bits int
}

// dataType is one row of the dtype-name table: Name a Rust literal.
type dataType struct {
	Name, Code string
	Bits       int
}

// check is one check: its variant of Rule and the documentation of it,
// and its row of the message table as Rust literals.
type check struct {
	Variant, ID, Purpose, ParamList string
	IDLit, PythonLit, TextLit       string
	Params                          string // the parameter names, Rust literals joined by ", "
}

// protocol is the names of the Python protocol, for the pyo3 glue.
type protocol struct {
	Capsule, UsedCapsule          string
	Versioned, UsedVersioned      string
	ExchangeAttr, ExchangeCapsule string // "" when the release has none
	PreviousExchangeAttr          string // the attribute's spelling in the release before, if renamed
}

// ruleTables gathers the rules of api, a release with versioned tensors.
func ruleTables(api *ir.API) (*rules, error) {
	devices, codes := api.Enum.DeviceType, api.Enum.DataTypeCode
	if devices == nil || codes == nil {
		return nil, fmt.Errorf("the safe layer needs the enums with roles %s and %s", ir.DeviceTypeEnum, ir.DataTypeCodeEnum)
	}
	if api.Flag.ReadOnly == nil || api.Flag.IsCopied == nil {
		return nil, fmt.Errorf("the safe layer needs the flags with roles %s and %s", ir.ReadOnlyFlag, ir.IsCopiedFlag)
	}
	if len(api.Rules.Messages) == 0 || api.Rules.MaxDims <= 0 {
		return nil, fmt.Errorf("the safe layer needs the schema's rules: max_ndim and messages")
	}
	r := &rules{
		Version:    fmt.Sprintf("(%s, %s)", api.Versions.Major.Name, api.Versions.Minor.Name),
		MaxDims:    api.Rules.MaxDims,
		DeviceType: devices.Name, TypeCode: codes.Name,
		ReadOnly: api.Flag.ReadOnly.Name, IsCopied: api.Flag.IsCopied.Name, Padded: "None",
	}
	if f := api.Flag.SubbytePadded; f != nil {
		r.Padded = "Some(" + f.Name + ")"
	}
	r.Nullables = nullables(api)
	r.addEnums(api)
	r.addChecks(api)
	return r, nil
}

// nullables are the nullable pointer fields of api's structs.
func nullables(api *ir.API) []nullableStruct {
	var out []nullableStruct
	for _, s := range api.Structs() {
		ns := nullableStruct{Struct: s.Name}
		for _, f := range s.Fields {
			if f.Nullable.When == ir.NullNever {
				continue
			}
			nf := nullableField{
				Doc:   fmt.Sprintf("When `%s` may be NULL: %s.", f.Name, nullableText(f.Nullable)),
				Const: strings.ToUpper(f.Name) + "_NULLABLE",
				When:  nullWhens[f.Nullable.When],
			}
			if c := f.Nullable.Changed; c != nil {
				nf.Since, nf.Before = fmt.Sprintf("(%d, %d)", c.In.Major, c.In.Minor), nullWhens[c.From]
			}
			ns.Fields = append(ns.Fields, nf)
		}
		if ns.Fields != nil {
			out = append(out, ns)
		}
	}
	return out
}

// addEnums adds the devices' facts, the type codes' and the dtype names.
func (r *rules) addEnums(api *ir.API) {
	devices, codes := api.Enum.DeviceType, api.Enum.DataTypeCode
	for _, ev := range devices.Values {
		if ev.HostReadable {
			r.HostReadable = append(r.HostReadable, ev.Name)
		}
		if ev.Streamless {
			r.Streamless = append(r.Streamless, ev.Name)
		}
	}
	for _, ev := range codes.Values {
		if ev.Opaque {
			r.Opaque = append(r.Opaque, ev.Name)
		}
		if ev.Bits != 0 {
			r.FixedBits = append(r.FixedBits, fixedBits{Code: ev.Name, Bits: ev.Bits})
		}
	}
	for _, n := range api.DataTypeNames() {
		var name string
		for _, ev := range codes.Values {
			if ev.Value == n.Code {
				name = ev.Name
			}
		}
		r.DataTypes = append(r.DataTypes, dataType{Name: rustString(n.Name), Code: codes.Name + "::" + name, Bits: n.Bits})
	}
}

// addChecks adds the import checks and the Python protocol's names.
func (r *rules) addChecks(api *ir.API) {
	for _, m := range api.Rules.Messages {
		var params []string
		for _, p := range m.Check.Params {
			params = append(params, rustString(p))
		}
		r.Checks = append(r.Checks, check{
			Variant: camel(m.Check.ID), ID: m.Check.ID, Purpose: m.Check.Purpose,
			ParamList: strings.Join(m.Check.Params, ", "),
			IDLit:     rustString(m.Check.ID), PythonLit: rustString(m.Python), TextLit: rustString(m.Text),
			Params: strings.Join(params, ", "),
		})
	}
	p := api.Protocol
	r.Python = protocol{
		Capsule: p.Capsule.Name, UsedCapsule: p.UsedCapsule.Name,
		Versioned: p.VersionedCapsule.Name, UsedVersioned: p.UsedVersionedCapsule.Name,
	}
	if p.ExchangeAPIAttribute != nil {
		r.Python.ExchangeAttr = p.ExchangeAPIAttribute.Name
		r.Python.PreviousExchangeAttr = p.ExchangeAPIAttribute.Previous
	}
	if p.ExchangeAPICapsule != nil {
		r.Python.ExchangeCapsule = p.ExchangeAPICapsule.Name
	}
}

// nullWhens are the Rust spellings of ir.NullWhen, in its order.
var nullWhens = [...]string{"NullWhen::Never", "NullWhen::Always", "NullWhen::IfNdimZero", "NullWhen::IfNoElements"}

// nullWhenTexts say when NULL is allowed, for documentation.
var nullWhenTexts = [...]string{"never", "always", "only when the tensor has no dimensions", "only when the tensor has no elements"}

func nullableText(n ir.Nullable) string {
	text := nullWhenTexts[n.When]
	if c := n.Changed; c != nil {
		text += fmt.Sprintf("; in tensors older than %s, %s", c.In, nullWhenTexts[c.From])
	}
	return text
}

// camel spells a check id as a Rust variant: dtype_name -> DtypeName.
func camel(id string) string {
	var b strings.Builder
	for _, w := range strings.Split(id, "_") {
		if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}

// rustString is s as a Rust string literal.
func rustString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(s) + `"`
}
