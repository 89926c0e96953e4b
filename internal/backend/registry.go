package backend

import (
	"fmt"
	"sort"

	"github.com/dlgen/dlgen/internal/ir"
)

// Registration is what the driver knows of a backend: its name, the flags
// that only it takes, how to make it, and what of its output other
// backends ship. A backend package registers itself from an init function;
// internal/backend/all imports every one for that alone, so that a new
// language touches its own folder and one import line.
type Registration struct {
	Name    string   // the value of -lang that selects the backend
	Options []Option // the backend's own flags, such as -python-package
	// New makes the backend for one run.
	New func(Config) Backend
	// ByNameOnly leaves the backend out of -lang's default: it runs only
	// when -lang names it (the conformance kit, a tool rather than
	// bindings).
	ByNameOnly bool
	// Headers marks the backend whose output is the C headers: the driver
	// renders it for a HeaderUser, which ships a copy of each file.
	Headers bool
	// Reference is the path, in the backend's output, of the module a
	// ReferenceUser ships as its reference declarations; "" for none.
	Reference string
	// Reserved are the words the language takes, which no schema name may
	// be (its keywords, the names its output uses itself): Register adds
	// them to the table the schema loader checks names against
	// (ir.Reserve).
	Reserved []ir.Reserved
}

// Option is a flag of dlgen that only one backend takes. A value given
// with -lang not selecting the backend is a usage error.
type Option struct {
	Flag  string // the flag's name without its dash: "python-package"
	Arg   string // the value's placeholder in the usage line: "NAME"
	Usage string // the flag's help, as flag.PrintDefaults prints it
	// Check says why a value the user gave is unusable, in words that name
	// the flag; nil accepts every value.
	Check func(value string) error
}

// Config is what a backend is made from: how generated files name the
// schema, and the values of its Options that were given, by flag name.
type Config struct {
	Schema  string            // how generated files name the schema
	Options map[string]string // the backend's flags given a value, by name
}

var registry = map[string]Registration{}

// Register makes a backend known to the driver. It panics on a second
// backend of one name, or on a flag another backend already takes: both
// are mistakes in dlgen, not in its input.
func Register(r Registration) {
	if _, dup := registry[r.Name]; dup || r.Name == "" || r.New == nil {
		panic(fmt.Sprintf("backend.Register: backend %q registered twice, or without a name or New", r.Name))
	}
	for _, o := range r.Options {
		if owner, ok := optionOwner(o.Flag); ok {
			panic(fmt.Sprintf("backend.Register: -%s of backend %q is already backend %q's", o.Flag, r.Name, owner.Name))
		}
	}
	registry[r.Name] = r
	ir.Reserve(r.Reserved...)
}

// Registered returns every registered backend, by name: the order -lang
// lists them in and the driver renders them in.
func Registered() []Registration {
	out := make([]Registration, 0, len(registry))
	for _, r := range registry {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup returns the backend registered under name.
func Lookup(name string) (Registration, bool) {
	r, ok := registry[name]
	return r, ok
}

// Supplier returns the registered backend that supplies what has reports
// it does (r.Headers, or r.Reference != ""), the first by name.
func Supplier(has func(r Registration) bool) (Registration, bool) {
	for _, r := range Registered() {
		if has(r) {
			return r, true
		}
	}
	return Registration{}, false
}

// optionOwner returns the backend that takes the flag named flag.
func optionOwner(flag string) (Registration, bool) {
	for _, r := range registry {
		for _, o := range r.Options {
			if o.Flag == flag {
				return r, true
			}
		}
	}
	return Registration{}, false
}
