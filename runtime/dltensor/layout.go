package dltensor

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"unsafe"

	"github.com/dlgen/dlgen/generated/go/dlpack"
)

// ErrNotDLPackType: a pointer handed to Import, ImportLegacy,
// DeleteVersioned or DeleteLegacy is not to a struct laid out as the
// DLPack type the function takes. Nothing was read through it.
var ErrNotDLPackType = errors.New("not a pointer to the DLPack type asked for")

// sameLayout says how got's memory layout differs from want's, "" if in
// no way: the same kinds, sizes and alignments, struct fields of the same
// names at the same offsets (padding aside), and the same for what pointers point to.
// Types may come from different packages: every package dlgen writes
// (-lang go) declares DLPack's types alike.
func sameLayout(got, want reflect.Type, path string) string {
	switch {
	case got.Kind() != want.Kind():
		return fmt.Sprintf("%s is of kind %s, want %s", path, got.Kind(), want.Kind())
	case got.Size() != want.Size() || got.Align() != want.Align():
		return fmt.Sprintf("%s has size %d and alignment %d, want %d and %d", path, got.Size(), got.Align(), want.Size(), want.Align())
	}
	switch want.Kind() {
	case reflect.Struct:
		g, w := namedFields(got), namedFields(want)
		if len(g) != len(w) {
			return fmt.Sprintf("%s has %d fields, want %d", path, len(g), len(w))
		}
		for i := range w {
			if g[i].Name != w[i].Name || g[i].Offset != w[i].Offset {
				return fmt.Sprintf("%s field %d is %s at offset %d, want %s at offset %d", path, i, g[i].Name, g[i].Offset, w[i].Name, w[i].Offset)
			}
			if diff := sameLayout(g[i].Type, w[i].Type, path+"."+w[i].Name); diff != "" {
				return diff
			}
		}
	case reflect.Pointer, reflect.Array:
		if want.Kind() == reflect.Array && got.Len() != want.Len() {
			return fmt.Sprintf("%s has %d elements, want %d", path, got.Len(), want.Len())
		}
		return sameLayout(got.Elem(), want.Elem(), "*"+path)
	}
	return "" // numbers and unsafe.Pointer: kind and size say it all
}

// namedFields are t's fields but padding (_), which the offsets and the
// size account for: its width depends on the GOARCH.
func namedFields(t reflect.Type) []reflect.StructField {
	var fields []reflect.StructField
	for i := range t.NumField() {
		if f := t.Field(i); f.Name != "_" {
			fields = append(fields, f)
		}
	}
	return fields
}

var (
	versionedType = reflect.TypeFor[dlpack.ManagedTensorVersioned]()
	legacyType    = reflect.TypeFor[dlpack.ManagedTensor]()
	// layoutErrors caches each type's verdict (an error, or nil) per
	// wanted type: a type is checked once per process.
	layoutErrors sync.Map // [2]reflect.Type{got, want} -> error
)

// convert returns m as a pointer to dlpack's W, which must have the
// layout of M, or an error naming fn, what was passed and what to pass.
// Imports are hot: dlgen's own type costs a type assertion, another
// package's a map lookup after the first call.
func convert[W, M any](fn string, m *M) (*W, error) {
	if w, ok := any(m).(*W); ok {
		return w, nil
	}
	got, want := reflect.TypeFor[M](), reflect.TypeFor[W]()
	key := [2]reflect.Type{got, want}
	verdict, ok := layoutErrors.Load(key)
	if !ok {
		verdict = layoutError(fn, got, want)
		layoutErrors.Store(key, verdict)
	}
	if err, _ := verdict.(error); err != nil {
		return nil, err
	}
	return (*W)(unsafe.Pointer(m)), nil
}

// counterpart names the function that takes the other format.
var counterpart = map[string]string{"Import": "ImportLegacy", "ImportLegacy": "Import",
	"DeleteVersioned": "DeleteLegacy", "DeleteLegacy": "DeleteVersioned"}

func layoutError(fn string, got, want reflect.Type) error {
	diff := sameLayout(got, want, got.Name())
	if diff == "" {
		return nil
	}
	hint := ""
	if want == versionedType && sameLayout(got, legacyType, "") == "" {
		hint = "; it is laid out as a DLManagedTensor (DLPack < 1.0): pass it to " + counterpart[fn]
	}
	if want == legacyType && sameLayout(got, versionedType, "") == "" {
		hint = "; it is laid out as a DLManagedTensorVersioned (DLPack >= 1.0): pass it to " + counterpart[fn]
	}
	return fmt.Errorf("dltensor: %s takes a *%s of a Go package dlgen generated (%s, or your own from dlgen -lang go), "+
		"and was passed a *%s whose layout differs: %s%s: %w", fn, want.Name(), want.PkgPath(), got, diff, hint, ErrNotDLPackType)
}
