package golang

import (
	"strings"

	"github.com/dlgen/dlgen/internal/backend"
	"github.com/dlgen/dlgen/internal/ir"
)

// The namer: every Go identifier dlgen emits comes from these functions.

// typeName maps a C type name to its Go name: DLTensor -> Tensor,
// DLPackVersion -> Version.
func typeName(c string) string {
	for _, prefix := range []string{"DLPack", "DL"} {
		if rest, ok := strings.CutPrefix(c, prefix); ok && rest != "" {
			return rest
		}
	}
	return camel(c)
}

// enumeratorName maps kDLFloat8_e4m3fn of enum DLDataTypeCode to
// DataTypeCodeFloat8E4m3fn.
func enumeratorName(enum, c string) string {
	return typeName(enum) + camel(strings.TrimPrefix(c, "kDL"))
}

// macroName maps DLPACK_MAJOR_VERSION to MajorVersion and
// DLPACK_FLAG_BITMASK_READ_ONLY to FlagBitmaskReadOnly.
func macroName(c string) string { return camel(strings.ToLower(strings.TrimPrefix(c, "DLPACK_"))) }

// flagsTypeName maps the flags group DLPACK_FLAG_BITMASK to FlagBitmask.
func flagsTypeName(c string) string { return macroName(c) }

// fieldName maps snake_case to Go's MixedCaps with initialisms:
// device_id -> DeviceID, dl_tensor -> DLTensor.
func fieldName(c string) string { return camel(c) }

var initialisms = map[string]string{
	"id": "ID", "api": "API", "dl": "DL", "dltensor": "DLTensor", "abi": "ABI",
}

// camel joins the underscore-separated words of s, each capitalised;
// words already containing capitals are kept as written after their first
// letter.
func camel(s string) string {
	var b strings.Builder
	for _, w := range strings.Split(s, "_") {
		if w == "" {
			continue
		}
		if in, ok := initialisms[strings.ToLower(w)]; ok && strings.ToLower(w) == w {
			b.WriteString(in)
			continue
		}
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return b.String()
}

// names detects two C names mapping to one Go identifier: the schema
// element (or what dlgen writes) each Go name stands for, by Go name.
type names map[string]claimed

// claimed is what a Go name stands for.
type claimed struct {
	what string // the C name, or what dlgen writes ("rules Nullable")
	pos  ir.Pos // where the schema declares it
}

// claim records that goName stands for cName, declared at pos. A second
// C name for goName is refused at its own position.
func (n names) claim(goName, cName string, pos ir.Pos) error {
	if prev, ok := n[goName]; ok && prev.what != cName {
		return backend.Errorf(pos, "Go name %s would stand for both %s and %s", goName, prev.what, cName)
	}
	n[goName] = claimed{cName, pos}
	return nil
}

// claimOwn records that dlgen writes goName for what, a name the Go
// package has whatever the schema calls things (Nullable, MaxDims,
// RuleDtypeName) or makes of a schema name (TensorShapeNullable). Every schema name is claimed first: one that took
// goName is refused at its own position, the element to rename.
func (n names) claimOwn(goName, what string) error {
	if prev, ok := n[goName]; ok && prev.what != what {
		return backend.Errorf(prev.pos, "Go name %s would stand for both %s and %s, which dlgen writes", goName, prev.what, what)
	}
	n[goName] = claimed{what, ir.Pos{}}
	return nil
}
