package c

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/dlgen/dlgen/internal/backend"
	"github.com/dlgen/dlgen/internal/ir"
)

// HelpersPath is where the helper header is written, beside the header.
const HelpersPath = "c/dlpack/dlpack_helpers.h"

// The helper header is the import rules of docs/rules.md in C, for the
// frameworks written in C and C++: the checks, in their order, the facts a
// consumer recomputes, the legacy/versioned wrappers, the capsule protocol
// and a complete __dlpack__ and from_dlpack for C extensions. Its code is
// hand-written, the same for every release (runtime/dlpack_helpers.h,
// with the release's side of each feature block: features.go), and names
// no fact; the template (dlpack_helpers.h.tmpl) renders around it
// only what a release says, from the IR alone: macros (DLGEN_HAS_VERSIONED,
// the managed tensors' spellings, the padded flag, nullability, capsule
// names), dlgen_rule, and tables (the same facts and messages the Go,
// Python and Rust tables hold).

// helpers is what dlpack_helpers.h.tmpl renders.
type helpers struct {
	Marker, License, Title, Schema string
	Code                           string // the hand-written part, with the release's side of each feature block
	Versioned                      bool   // the release has DLManagedTensorVersioned
	Major, Minor                   string // the consumer's version macros (versioned releases)
	// The C spellings of the managed tensors in this release ("struct
	// DLManagedTensorVersioned" before its typedef).
	Legacy, VersionedType           string
	MaxDims, MaxParams              int
	Nullables                       []nullableField // DLTensor's data, shape and strides
	TypeCode                        string          // the dtype_code enum
	Codes                           []typeCode
	HostReadable                    []string // device type enumerators the CPU reads
	Streamless                      []string // device type enumerators without streams
	DataTypes                       []dataTypeName
	KnownNames                      string // the dtype names joined by ", ", a C literal
	Padded                          string // the padded sub-byte flag's macro, "" where none
	ReadOnly                        string // the read-only flag's macro (versioned releases)
	IsCopied                        string // the is-copied flag's macro (versioned releases)
	Rules                           []rule
	Capsule, UsedCapsule            string // C literals
	VersionedCapsule, UsedVersioned string
	ExchangeAttr, ExchangeCapsule   string // C literals, "" when the release has none
}

type nullableField struct {
	Macro, When, Before string // Before: the rule of tensors older than InMajor.InMinor
	InMajor, InMinor    int
}

type typeCode struct {
	Name   string
	Opaque bool
	Bits   int
}

type dataTypeName struct {
	Name, Code string // a C literal, the enumerator
	Bits       int
}

// rule is one check: its enumerator, id, Python exception, text, and the
// message in pieces: literal text (a C literal) or an argument's index.
type rule struct {
	Enum, ID, Purpose, Python, Text string
	// Format is the message as dlgen_format_error reads it, a C literal:
	// its text, parameter k as the byte k + 1.
	Format string
	Value  int
	Comma  string // "," but after the last (C89 and C++98 refuse one)
}

// nullWhenC are the C spellings of ir.NullWhen, in its order.
var nullWhenC = [...]string{"DLGEN_NULL_NEVER", "DLGEN_NULL_ALWAYS", "DLGEN_NULL_IF_NDIM_ZERO", "DLGEN_NULL_IF_NO_ELEMENTS"}

func (b Backend) helpers(api *ir.API) ([]byte, error) {
	codes, devices := api.Enum.DataTypeCode, api.Enum.DeviceType
	if codes == nil || devices == nil || len(api.Rules.Messages) == 0 {
		// A schema without rules, or without the enums the checks name
		// (the golden tests' small schemas), has no checker to write.
		return nil, nil
	}
	h := helpers{
		Marker: backend.Marker, License: backend.SPDX, Title: api.Version().Title(), Schema: b.Schema,
		Versioned: api.Versioned(), MaxDims: api.Rules.MaxDims, TypeCode: codes.Name,
	}
	if h.Versioned {
		h.Major, h.Minor = api.Versions.Major.Name, api.Versions.Minor.Name
	}
	if err := h.addStructs(api); err != nil {
		return nil, err
	}
	h.addEnums(api)
	if err := h.addRules(api); err != nil {
		return nil, err
	}
	h.addProtocol(api.Protocol)
	code, err := withFeatures(helpersCode, features(h))
	if err != nil {
		return nil, fmt.Errorf("internal/backend/c/runtime/dlpack_helpers.h: %w", err)
	}
	h.Code = code
	tmpl, err := backend.ParseTemplate(templates, "templates/dlpack_helpers.h.tmpl", map[string]any{"comment": comment})
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, h); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// addStructs adds the managed tensors' C types and DLTensor's nullable
// pointers.
func (h *helpers) addStructs(api *ir.API) error {
	for _, s := range api.Structs() {
		switch s.Name {
		case "DLManagedTensor":
			h.Legacy = s.CType(api.Version())
		case "DLManagedTensorVersioned":
			h.VersionedType = s.CType(api.Version())
		}
		if s.Name != "DLTensor" {
			continue
		}
		for _, f := range s.Fields {
			if f.Name != "data" && f.Name != "shape" && f.Name != "strides" {
				continue
			}
			n := nullableField{Macro: strings.ToUpper(f.Name), When: nullWhenC[f.Nullable.When], Before: nullWhenC[f.Nullable.When]}
			if c := f.Nullable.Changed; c != nil {
				n.Before, n.InMajor, n.InMinor = nullWhenC[c.From], c.In.Major, c.In.Minor
			}
			h.Nullables = append(h.Nullables, n)
		}
	}
	if len(h.Nullables) != 3 || h.Legacy == "" || h.Versioned != (h.VersionedType != "") {
		return fmt.Errorf("the C helpers need DLTensor's pointers data, shape and strides, and the managed tensors")
	}
	return nil
}

// addEnums adds the type codes, the devices' facts, the dtype names and the
// flags.
func (h *helpers) addEnums(api *ir.API) {
	codes := api.Enum.DataTypeCode
	for _, ev := range codes.Values {
		h.Codes = append(h.Codes, typeCode{Name: ev.Name, Opaque: ev.Opaque, Bits: ev.Bits})
	}
	for _, ev := range api.Enum.DeviceType.Values {
		if ev.HostReadable {
			h.HostReadable = append(h.HostReadable, ev.Name)
		}
		if ev.Streamless {
			h.Streamless = append(h.Streamless, ev.Name)
		}
	}
	var names []string
	for _, n := range api.DataTypeNames() {
		for _, ev := range codes.Values {
			if ev.Value == n.Code {
				h.DataTypes = append(h.DataTypes, dataTypeName{Name: cString(n.Name), Code: ev.Name, Bits: n.Bits})
			}
		}
		names = append(names, n.Name)
	}
	h.KnownNames = cString(strings.Join(names, ", "))
	if f := api.Flag.SubbytePadded; f != nil {
		h.Padded = f.Name
	}
	if f := api.Flag.ReadOnly; f != nil {
		h.ReadOnly = f.Name
	}
	if f := api.Flag.IsCopied; f != nil {
		h.IsCopied = f.Name
	}
}

// addRules adds the import rules, each message a C format whose parameters
// are the bytes 1, 2, ...
func (h *helpers) addRules(api *ir.API) error {
	for _, m := range api.Rules.Messages {
		var format strings.Builder
		for _, p := range m.Parts() {
			if p.Text == "" {
				format.WriteByte(byte(p.Param + 1))
			} else if strings.IndexFunc(p.Text, func(c rune) bool { return c < ' ' }) >= 0 {
				return fmt.Errorf("the message of %s holds a control character, which the C helpers read as a parameter: %q", m.Check.ID, p.Text)
			} else {
				format.WriteString(p.Text)
			}
		}
		r := rule{Enum: "DLGEN_RULE_" + strings.ToUpper(m.Check.ID), ID: cString(m.Check.ID), Purpose: m.Check.ID + ": " + m.Check.Purpose + ".",
			Python: "PyExc_" + m.Python, Text: cString(m.Text), Format: cString(format.String()), Value: len(h.Rules) + 1, Comma: ","}
		h.MaxParams = max(h.MaxParams, len(m.Check.Params))
		h.Rules = append(h.Rules, r)
	}
	h.Rules[len(h.Rules)-1].Comma = ""
	return nil
}

// addProtocol adds the capsules' names and the C exchange API's.
func (h *helpers) addProtocol(p ir.Protocol) {
	h.Capsule, h.UsedCapsule = cString(p.Capsule.Name), cString(p.UsedCapsule.Name)
	if h.Versioned {
		h.VersionedCapsule, h.UsedVersioned = cString(p.VersionedCapsule.Name), cString(p.UsedVersionedCapsule.Name)
	}
	if p.ExchangeAPIAttribute != nil {
		h.ExchangeAttr = cString(p.ExchangeAPIAttribute.Name)
	}
	if p.ExchangeAPICapsule != nil {
		h.ExchangeCapsule = cString(p.ExchangeAPICapsule.Name)
	}
}

// features are the template's feature macros (DLGEN_HAS_...) and their
// value in the release h describes.
func features(h helpers) map[string]bool {
	return map[string]bool{featureMacros[0]: h.Versioned, featureMacros[1]: h.Padded != ""}
}

// featureMacros are the feature macros the hand-written helper code asks.
var featureMacros = []string{"DLGEN_HAS_VERSIONED", "DLGEN_HAS_PADDED_FLAG"}

// cString is s as a C string literal: printable ASCII as it is, anything
// else escaped in octal (which, unlike \x, ends after three digits).
func cString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '?': // no trigraphs under C89
			b.WriteString(`\?`)
		case c >= ' ' && c <= '~':
			b.WriteByte(c)
		default:
			b.WriteString(`\` + strconv.FormatInt(int64(c)|0o1000, 8)[1:])
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Verbatim maps the hand-written helper code, as each release's header
// holds it (one text per combination of the feature macros, named by
// their values), to that text, so that golden files name it instead of
// repeating it (package backendtest).
func (Backend) Verbatim() map[string]string {
	out := map[string]string{}
	for combination := range 1 << len(featureMacros) {
		on := map[string]bool{}
		var values []string
		for i, name := range featureMacros {
			on[name] = combination>>i&1 == 1
			values = append(values, fmt.Sprintf("%s=%d", name, combination>>i&1))
		}
		if code, err := withFeatures(helpersCode, on); err == nil { // else the generator reports it
			out["internal/backend/c/runtime/dlpack_helpers.h with "+strings.Join(values, " ")] = code
		}
	}
	return out
}
