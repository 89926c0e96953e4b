package ir

import (
	"slices"
	"strings"
	"sync"
)

// NameKind is what a schema name names, as the lists of ReservedWords
// apply to it.
type NameKind uint8

// The kinds of names, which a list applies to.
const (
	TypeName       NameKind = 1 << iota // a struct (or its tag), enum, flags group or function type
	FieldName                           // a struct's field
	EnumeratorName                      // an enumerator or a flag
	MacroName                           // a macro (or the header guard)
	ParamName                           // a function type's parameter
	// AnyName is every kind.
	AnyName = TypeName | FieldName | EnumeratorName | MacroName | ParamName
)

// Reserved is one list of words a language dlgen writes will not take as
// a name, or takes with another meaning. The schema feeds every language,
// so a name on any list is refused, whatever -lang selects
// (docs/schema.md#names).
type Reserved struct {
	Lang  string   // the language, as an error names it
	Kind  string   // what the words are to it
	Words string   // space-separated
	On    NameKind // the names the list applies to
	// Folded: a name is on the list if it folds (Fold) as a word does,
	// as Go's capitalised names come from the schema's.
	Folded bool
	// Output: the names the language's output uses or declares itself,
	// which tests/names derives from the output (output_names.go in the
	// backend's folder) and keeps current.
	Output bool
}

// Reserve adds lists to the table of reserved words, which the schema
// loader checks every name against: each backend registers its language's
// lists (backend.Registration's Reserved), so the schema feeds every
// language linked in, whatever -lang selects (docs/schema.md#names).
func Reserve(lists ...Reserved) {
	reservedMu.Lock()
	defer reservedMu.Unlock()
	reserved = append(reserved, lists...)
	reservedIndex = nil
}

// ReservedWords is the table: every list Reserve was given, in order.
func ReservedWords() []Reserved {
	reservedMu.Lock()
	defer reservedMu.Unlock()
	return slices.Clone(reserved)
}

var (
	reservedMu    sync.Mutex
	reserved      []Reserved
	reservedIndex map[string][]int // by word (folded for Folded lists); nil until asked
)

// lookup returns the lists word is on (word folded for Folded lists).
func lookup(word string) []Reserved {
	reservedMu.Lock()
	defer reservedMu.Unlock()
	if reservedIndex == nil {
		reservedIndex = map[string][]int{}
		for i, r := range reserved {
			for _, w := range strings.Fields(r.Words) {
				if r.Folded {
					w = Fold(w)
				}
				reservedIndex[w] = append(reservedIndex[w], i)
			}
		}
	}
	var out []Reserved
	for _, i := range reservedIndex[word] {
		out = append(out, reserved[i])
	}
	return out
}

// ReservedAs lists why name cannot name a schema element of kind in every
// language: each list of ReservedWords it is on ("a C23 keyword in C"),
// and the patterns C, C++ and Python reserve. Empty means the name is
// free everywhere.
func ReservedAs(name string, kind NameKind) []string {
	var why []string
	for _, r := range lookup(name) {
		if r.On&kind != 0 && !r.Folded {
			why = append(why, "a "+r.Kind+" in "+r.Lang)
		}
	}
	for _, r := range lookup(Fold(name)) {
		if r.On&kind != 0 && r.Folded {
			why = append(why, "a "+r.Kind+" in "+r.Lang)
		}
	}
	switch {
	case strings.Contains(name, "__"):
		why = append(why, "reserved to the implementation by C and C++ (a double underscore)")
	case len(name) > 1 && name[0] == '_' && 'A' <= name[1] && name[1] <= 'Z':
		why = append(why, "reserved to the implementation by C (an underscore and a capital)")
	case len(name) > 2 && name[0] == '_' && name[len(name)-1] == '_' && lookup(name) == nil:
		why = append(why, "a _sunder_ name, which Python's ctypes and enum reserve")
	}
	return why
}

// Fold is name in lower case without underscores: two names of one scope
// that fold alike may become one name in some language (Go capitalises
// self and Self alike; Rust writes a keyword type as type_).
func Fold(name string) string { return strings.ToLower(strings.ReplaceAll(name, "_", "")) }

// Keyword reports whether word is a keyword (not a soft one) of lang.
func Keyword(lang, word string) bool {
	for _, r := range lookup(word) {
		if r.Lang == lang && r.Kind == "keyword" {
			return true
		}
	}
	return false
}
