package rust

import (
	"fmt"

	"github.com/dlgen/dlgen/ir"
)

// model is one C data model of ir.ABIs, with the checks of its layout.
// Its cfg predicate is the template's ("cfg" in rust-layout.rs.tmpl).
type model struct {
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
		}
		out = append(out, m)
	}
	return out
}

// noCfg fails a template that has no cfg predicate for a data model.
func noCfg(name string) (string, error) {
	return "", fmt.Errorf("no cfg predicate identifies the %s data model", name)
}
