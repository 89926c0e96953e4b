package schema

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/dlgen/dlgen/internal/ir"
	"gopkg.in/yaml.v3"
)

// The keys that carry the rules a consumer checks (docs/rules.md): facts
// on enums, enumerators, fields and flags, and the rules section.

// held is a field's holds: key, resolved once every declaration is read.
type held struct {
	field *ir.Field
	owner string // the struct's name
	name  string
	pos   ir.Pos
}

// cxxBase reads an enum's cxx_base: {type, since}.
func (d *decoder) cxxBase(e *ir.Enum, n *yaml.Node) {
	if n == nil {
		return
	}
	m := d.mapping(n, "cxx_base", "type!", "since!")
	if m == nil || m["type"] == nil || m["since"] == nil {
		return
	}
	e.CXXBase = d.str(m["type"], "cxx_base.type")
	if info, ok := ir.Scalars[e.CXXBase]; !ok || !info.Int || info.Size != 4 {
		// C keeps the enum in an int: a C++ base of another size would give
		// C and C++ different layouts.
		d.errorf(m["type"], "cxx_base type %q is not a 4-byte fixed-width integer type, as C's int is", e.CXXBase)
	}
	v := d.release(m["since"], "cxx_base.since")
	e.CXXBaseSince = &v
}

// enumeratorRules reads the keys that only enumerators of some enum roles
// have.
func (d *decoder) enumeratorRules(e *ir.Enum, ev *ir.Enumerator, m map[string]*yaml.Node) {
	only := func(key string, role ir.EnumRole) bool {
		if m[key] == nil {
			return false
		}
		if e.Role != role {
			d.errorf(m[key], "%s is for enumerators of the enum with role %s", key, role)
			return false
		}
		return true
	}
	if only("host_readable", ir.DeviceTypeEnum) {
		ev.HostReadable = d.boolean(m["host_readable"], "host_readable")
	}
	if only("streamless", ir.DeviceTypeEnum) {
		ev.Streamless = d.boolean(m["streamless"], "streamless")
	}
	if only("opaque", ir.DataTypeCodeEnum) {
		ev.Opaque = d.boolean(m["opaque"], "opaque")
	}
	if only("bits", ir.DataTypeCodeEnum) {
		ev.Bits = d.width(m["bits"], "bits")
	}
	if only("dtypes", ir.DataTypeCodeEnum) {
		ev.DataTypes = d.dtypes(m["dtypes"], ev)
	}
	if only("float", ir.DataTypeCodeEnum) {
		ev.Float = d.floatFormat(m["float"], ev)
	}
	if ev.Opaque && (ev.Bits != 0 || len(ev.DataTypes) > 0) {
		d.errorf(m["opaque"], "%s is opaque: its elements have no width and no dtype names", ev.Name)
	}
}

// floatFormat reads a small float's encoding: {exponent, mantissa, bias,
// special}, whose width must be the code's bits.
func (d *decoder) floatFormat(n *yaml.Node, ev *ir.Enumerator) *ir.FloatFormat {
	m := d.mapping(n, "a float format", "exponent!", "mantissa!", "bias!", "special!")
	if m == nil {
		return nil
	}
	f := &ir.FloatFormat{Exponent: int(d.integer(m["exponent"], "exponent")), Mantissa: int(d.integer(m["mantissa"], "mantissa")),
		Bias: int(d.integer(m["bias"], "bias")), Special: d.str(m["special"], "special")}
	if m["special"] != nil && !slices.Contains(ir.FloatSpecials, f.Special) {
		d.errorf(m["special"], "special %q is none of %s", f.Special, strings.Join(ir.FloatSpecials, ", "))
	}
	if f.Exponent < 1 || f.Mantissa < 0 || f.Width() > 8 {
		d.errorf(n, "float format of %s: %d exponent and %d mantissa bits are no small float (at most 8 bits in all)", ev.Name, f.Exponent, f.Mantissa)
	} else if ev.Bits == 0 {
		d.errorf(n, "float format of %s: a small float's code fixes its width; give %s bits: %d", ev.Name, ev.Name, f.Width())
	} else if f.Width() != ev.Bits {
		d.errorf(n, "float format of %s is %d bits wide, but %s allows %d", ev.Name, f.Width(), ev.Name, ev.Bits)
	}
	return f
}

// width reads a number of bits, as DLDataType.bits holds it.
func (d *decoder) width(n *yaml.Node, what string) int {
	v := d.integer(n, what)
	if v < 1 || v > 255 {
		d.errorf(n, "%s %d is outside [1, 255], which DLDataType.bits holds", what, v)
	}
	return int(v)
}

// dtypeName is what a dtype name looks like.
var dtypeName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// withLanes matches a name followed by a lane count, as "float32x4".
var withLanes = regexp.MustCompile(`^(.*)x[0-9]+$`)

// dtypes reads a mapping of dtype names to widths.
func (d *decoder) dtypes(n *yaml.Node, ev *ir.Enumerator) []ir.DataTypeName {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "dtypes must be a mapping of names to bits")
		return nil
	}
	var out []ir.DataTypeName
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := d.str(k, "dtype name")
		if !dtypeName.MatchString(name) {
			d.errorf(k, "dtype name %q is not lower case letters, digits and underscores", name)
		}
		bits := d.width(v, "bits of "+name)
		if ev.Bits != 0 && bits != ev.Bits {
			d.errorf(v, "dtype %s has %d bits, but %s allows only %d", name, bits, ev.Name, ev.Bits)
		}
		out = append(out, ir.DataTypeName{Name: name, Bits: bits, Pos: d.pos(k)})
	}
	return out
}

// nullable reads a field's nullable and nullable_changed.
func (d *decoder) nullable(m map[string]*yaml.Node, f *ir.Field) ir.Nullable {
	var n ir.Nullable
	if m["nullable"] == nil {
		if m["nullable_changed"] != nil {
			d.errorf(m["nullable_changed"], "nullable_changed needs nullable")
		}
		return n
	}
	if !pointerLike(f.Type) {
		d.errorf(m["nullable"], "only pointer fields are nullable; %s is %s", f.Name, f.Type.C(""))
	}
	n.When, _ = readRole(d.reader, m["nullable"], "nullable", ir.NullWhens())
	in, from, ok := d.history(m["nullable_changed"], "nullable_changed", f.Life)
	if ok {
		was, _ := readRole(d.reader, from, "nullable_changed.from", ir.NullWhens())
		n.Changed = &ir.NullableChange{In: in, From: was}
	}
	return n
}

// pointerLike reports whether a field of type t may hold NULL; a named
// type, not resolved yet, is checked again by validateRules.
func pointerLike(t *ir.Type) bool { return t.Kind != ir.Scalar }

// pythonExceptions are the exceptions a message may raise in Python.
var pythonExceptions = []string{"BufferError", "ValueError", "TypeError"}

// rules reads the rules section: max_ndim and one message per ir.Check.
func (d *decoder) rules(n *yaml.Node) ir.Rules {
	var rules ir.Rules
	m := d.mapping(n, "rules", "max_ndim!", "messages!")
	if m == nil {
		return rules
	}
	if m["max_ndim"] != nil {
		v := d.integer(m["max_ndim"], "max_ndim")
		if v < 1 || v > 1<<16 {
			d.errorf(m["max_ndim"], "max_ndim %d is outside [1, 65536]", v)
		}
		rules.MaxDims = int(v)
	}
	byID := map[string]*ir.Message{}
	for _, mn := range d.seq(m["messages"], "messages") {
		mm := d.mapping(mn, "a message", "id!", "python!", "text!")
		if mm == nil || mm["id"] == nil || mm["python"] == nil || mm["text"] == nil {
			continue
		}
		id := d.str(mm["id"], "id")
		check, ok := ir.CheckByID(id)
		switch {
		case !ok:
			d.errorf(mm["id"], "no check is called %s (the checks: %s)", id, checkIDs())
			continue
		case byID[id] != nil:
			d.errorf(mm["id"], "a second message for %s (the first at %s)", id, byID[id].Pos)
			continue
		}
		msg := &ir.Message{Check: check, Python: d.str(mm["python"], "python"), Text: d.text(mm["text"], "text"), Pos: d.pos(mn)}
		if !contains(pythonExceptions, msg.Python) {
			d.errorf(mm["python"], "python must be one of %s, not %q", strings.Join(pythonExceptions, ", "), msg.Python)
		}
		if err := placeholders(msg.Text, check.Params); err != "" {
			d.errorf(mm["text"], "message %s: %s", id, err)
		}
		byID[id] = msg
	}
	for _, c := range ir.Checks {
		if byID[c.ID] == nil {
			if m["messages"] != nil && len(d.errs) == 0 {
				d.errorf(m["messages"], "no message for check %s (%s)", c.ID, c.Purpose)
			}
			continue
		}
		rules.Messages = append(rules.Messages, byID[c.ID])
	}
	return rules
}

// placeholders checks that every brace of text opens a {param} of params;
// it returns what is wrong, or "".
func placeholders(text string, params []string) string {
	for rest := text; rest != ""; {
		open := strings.IndexAny(rest, "{}")
		if open < 0 {
			break
		}
		end := strings.IndexByte(rest[open:], '}')
		if rest[open] == '}' || end < 0 {
			return "a brace that opens no {parameter}"
		}
		name := rest[open+1 : open+end]
		if !contains(params, name) {
			return fmt.Sprintf("{%s} is not a parameter of the check (%s)", name, strings.Join(params, ", "))
		}
		rest = rest[open+end+1:]
	}
	return ""
}

func checkIDs() string {
	ids := make([]string, len(ir.Checks))
	for i, c := range ir.Checks {
		ids[i] = c.ID
	}
	return strings.Join(ids, ", ")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// validateRules checks what needs every declaration: holds: names an enum
// or flags group stored as the field's type and living as long, nullable
// fields are pointers, and dtype names are unique.
func (r *reader) validateRules(s *ir.Schema, index map[string]int) {
	fail := func(pos ir.Pos, format string, args ...any) {
		r.errs = append(r.errs, &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)})
	}
	for _, h := range r.holds {
		i, ok := index[h.name]
		if !ok {
			fail(h.pos, "%s.%s holds undefined %s", h.owner, h.field.Name, h.name)
			continue
		}
		decl := s.Decls[i]
		var storage string
		switch decl := decl.(type) {
		case *ir.Enum:
			storage = decl.Storage
		case *ir.Flags:
			storage = decl.Type
		default:
			fail(h.pos, "%s.%s holds %s, which is neither an enum nor a flags group", h.owner, h.field.Name, h.name)
			continue
		}
		if t := h.field.Type; t.Kind != ir.Scalar || t.Name != storage {
			fail(h.pos, "%s.%s is %s but holds %s, kept in %s", h.owner, h.field.Name, t.C(""), h.name, storage)
		}
		dl, fl := decl.DeclLife(), h.field.Life
		if fl.Since.Less(dl.Since) || dl.Until != nil && (fl.Until == nil || dl.Until.Less(*fl.Until)) {
			fail(h.pos, "%s.%s outlives %s, which it holds", h.owner, h.field.Name, h.name)
		}
		h.field.Holds = decl
	}
	dtypes := map[string]ir.Pos{}
	defer func() {
		// "float32x4" is float32 with four lanes: no name may read so.
		for name, pos := range dtypes {
			if m := withLanes.FindStringSubmatch(name); m != nil {
				if _, clash := dtypes[m[1]]; clash {
					fail(pos, "dtype name %s reads as %s with lanes", name, m[1])
				}
			}
		}
	}()
	for _, d := range s.Decls {
		switch d := d.(type) {
		case *ir.Enum:
			for _, ev := range d.Values {
				for _, n := range ev.DataTypes {
					if prev, dup := dtypes[n.Name]; dup {
						fail(n.Pos, "duplicate dtype name %s (first at %s)", n.Name, prev)
					}
					dtypes[n.Name] = n.Pos
				}
			}
		case *ir.Struct:
			for _, f := range d.Fields {
				if f.Nullable.When != ir.NullNever && f.Type.Kind == ir.Named {
					if _, fn := f.Type.Decl.(*ir.FuncType); !fn {
						fail(f.Pos, "only pointer fields are nullable; %s.%s is %s", d.Name, f.Name, f.Type.Name)
					}
				}
			}
		}
	}
}
