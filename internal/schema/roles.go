package schema

import (
	"fmt"

	"github.com/dlgen/dlgen/internal/ir"
)

// validateRoles checks, release by release, that every role is played by
// at most one element, that the roles backends need are played (see
// ir.Protocol and ir.VersionMacros), and that version macros hold the
// release's own numbers.
func (r *reader) validateRoles(s *ir.Schema) {
	// A problem is reported for the first release that has it.
	reported := map[string]bool{}
	once := func(pos ir.Pos, format string, args ...any) {
		if key := pos.String() + format; !reported[key] {
			reported[key] = true
			r.errs = append(r.errs, &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)})
		}
	}
	for _, rel := range s.Releases {
		v := rel.Version
		var proto ir.Protocol
		var versions ir.VersionMacros
		var enums ir.EnumsByRole
		var flags ir.FlagsByRole
		for _, p := range s.Python {
			if !p.Life.In(v) {
				continue
			}
			if prev := proto.Get(p.Role); prev != nil {
				once(p.Pos, "python role %s is played by both %s (at %s) and %s in release %s", p.Role, prev.Name, prev.Pos, p.Name, v)
				continue
			}
			proto.Set(p)
		}
		for _, m := range s.Macros {
			if !m.Life.In(v) || m.Role == ir.MacroPlain {
				continue
			}
			if prev := versions.Get(m.Role); prev != nil {
				once(m.Pos, "macro role %s is played by both %s (at %s) and %s in release %s", m.Role, prev.Name, prev.Pos, m.Name, v)
				continue
			}
			versions.Set(m)
			checkVersionValue(m, v, once)
		}
		for _, d := range s.Decls {
			if !d.DeclLife().In(v) {
				continue
			}
			switch d := d.(type) {
			case *ir.Enum:
				if prev := enums.Get(d.Role); prev != nil {
					once(d.Pos, "enum role %s is played by both %s (at %s) and %s in release %s", d.Role, prev.Name, prev.Pos, d.Name, v)
					continue
				}
				enums.Set(d)
			case *ir.Flags:
				for _, b := range d.Bits {
					if !b.Life.In(v) {
						continue
					}
					if prev := flags.Get(b.Role); prev != nil {
						once(b.Pos, "flag role %s is played by both %s (at %s) and %s in release %s", b.Role, prev.Name, prev.Pos, b.Name, v)
						continue
					}
					flags.Set(b)
				}
			}
		}
		for _, problem := range append(missingRoles(proto, versions), missingFlags(versions, flags)...) {
			once(rel.Pos, "release %s "+problem, v)
		}
	}
}

// missingRoles says what one release lacks that backends rely on.
func missingRoles(p ir.Protocol, vm ir.VersionMacros) []string {
	var out []string
	need := func(ok bool, format string, args ...any) {
		if !ok {
			out = append(out, fmt.Sprintf(format, args...))
		}
	}
	need(p.Capsule != nil, "has no python name with role %s; the Python backend needs one in every release", ir.CapsuleName)
	need(p.UsedCapsule != nil, "has no python name with role %s; the Python backend needs one in every release", ir.UsedCapsuleName)
	need((vm.Major == nil) == (vm.Minor == nil), "needs both a %s and a %s macro, or neither", ir.MacroMajorVersion, ir.MacroMinorVersion)
	versioned := vm.Major != nil
	for _, n := range []struct {
		role ir.PythonRole
		name *ir.PythonName
	}{{ir.VersionedCapsuleName, p.VersionedCapsule}, {ir.UsedVersionedCapsuleName, p.UsedVersionedCapsule}} {
		need(!versioned || n.name != nil, "has a %s macro (the versioned protocol) but no python name with role %s", ir.MacroMajorVersion, n.role)
		need(versioned || n.name == nil, "has a python name with role %s but no %s macro, which the versioned protocol needs", n.role, ir.MacroMajorVersion)
	}
	need(versioned || p.ExchangeAPIAttribute == nil, "has a python name with role %s but no %s macro, which the exchange API needs", ir.ExchangeAPIAttribute, ir.MacroMajorVersion)
	need(p.ExchangeAPIAttribute != nil || p.ExchangeAPICapsule == nil, "has a python name with role %s but none with role %s to hold it", ir.ExchangeAPICapsuleName, ir.ExchangeAPIAttribute)
	return out
}

// missingFlags says which flag roles a release lacks: the versioned
// protocol (a major_version macro) needs read_only and is_copied, and
// only it has flags.
func missingFlags(vm ir.VersionMacros, f ir.FlagsByRole) []string {
	var out []string
	for _, role := range ir.FlagRoles() {
		has := f.Get(role) != nil
		switch {
		case vm.Major != nil && !has && role != ir.SubbytePaddedFlag:
			out = append(out, fmt.Sprintf("has a %s macro (the versioned protocol) but no flag with role %s", ir.MacroMajorVersion, role))
		case vm.Major == nil && has:
			out = append(out, fmt.Sprintf("has a flag with role %s but no %s macro, which the versioned protocol's flags need", role, ir.MacroMajorVersion))
		}
	}
	return out
}

// checkVersionValue checks that a version macro holds release v's numbers.
func checkVersionValue(m *ir.Macro, v ir.Version, report func(ir.Pos, string, ...any)) {
	var val *ir.MacroValue
	for i := range m.Values {
		if !v.Less(m.Values[i].Since) {
			val = &m.Values[i]
		}
	}
	if val == nil {
		return // a value is missing: already reported
	}
	want, what := int64(-1), ""
	switch m.Role {
	case ir.MacroMajorVersion:
		want, what = int64(v.Major), "the release's major number"
	case ir.MacroMinorVersion:
		want, what = int64(v.Minor), "the release's minor number"
	case ir.MacroVersion:
		want, what = int64(v.Major)*100+int64(v.Minor)*10, "major*100 + minor*10"
	case ir.MacroABIVersion:
		if val.Value < 0 {
			report(val.Pos, "%s is %d in release %s; a %s macro cannot be negative", m.Name, val.Value, v, m.Role)
		}
		return
	}
	if val.Value != want {
		report(val.Pos, "%s is %d in release %s; a %s macro must be %s, %d", m.Name, val.Value, v, m.Role, what, want)
	}
}
