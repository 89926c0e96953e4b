package rust

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/dlgen/dlgen/internal/ir"
)

// model is one C data model of ir.ABIs, with the checks of its layout.
// Its cfg predicate is the template's ("cfg" in rust-layout.rs.tmpl).
// Tests holds the same checks by struct, one #[test] each, so that cargo
// test names what the compile-time guards hold.
type model struct {
	Name   string
	Checks []layoutCheck
	Tests  []layoutTest
}

// layoutTest is the checks of one struct, as the test Name.
type layoutTest struct {
	Name   string
	Checks []layoutCheck
}

// layoutCheck is one assertion: a struct's size and alignment, or, with
// Field set, a field's offset.
type layoutCheck struct {
	Struct, Field       string
	Size, Align, Offset int
}

// models lists, per data model, the assertions of api.LayoutChecks: each
// struct's size and alignment, each field's offset (a field's size is its
// type's, checked where that type is).
func models(api *ir.API) []model {
	var out []model
	for _, abi := range ir.ABIs {
		m := model{Name: abi.Name}
		for _, c := range api.LayoutChecks(abi) {
			lc := layoutCheck{Struct: c.Struct.Name, Size: c.Size, Align: c.Align, Offset: c.Offset}
			if c.Field != nil {
				lc.Field = ident(c.Field.Name)
			}
			m.Checks = append(m.Checks, lc)
			if n := len(m.Tests); n == 0 || m.Tests[n-1].Checks[0].Struct != lc.Struct {
				m.Tests = append(m.Tests, layoutTest{Name: snake(lc.Struct)})
			}
			m.Tests[len(m.Tests)-1].Checks = append(m.Tests[len(m.Tests)-1].Checks, lc)
		}
		out = append(out, m)
	}
	return out
}

// snake spells a C struct name as a Rust function name: DLTensor ->
// dl_tensor, DLPackExchangeAPI -> dlpack_exchange_api (DLPack is one word).
func snake(name string) string {
	name = strings.Replace(name, "DLPack", "Dlpack", 1)
	var b strings.Builder
	for i, r := range name {
		upper := unicode.IsUpper(r)
		if upper && i > 0 {
			prev, next := rune(name[i-1]), rune(0)
			if i+1 < len(name) {
				next = rune(name[i+1])
			}
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && unicode.IsLower(next)) {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// noCfg fails a template that has no cfg predicate for a data model.
func noCfg(name string) (string, error) {
	return "", fmt.Errorf("no cfg predicate identifies the %s data model", name)
}
