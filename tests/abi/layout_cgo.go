package abi

// #cgo CFLAGS: -I${SRCDIR}/../../generated/c
// #include <dlpack/dlpack.h>
import "C"

import (
	"reflect"

	"github.com/dlgen/dlgen/generated/go/dlpack"
)

// Pairs maps each C struct of the generated header (as cgo sees it) to the
// generated Go type that claims its layout.
var Pairs = map[string][2]reflect.Type{
	"DLPackVersion":            {reflect.TypeOf(C.DLPackVersion{}), reflect.TypeOf(dlpack.Version{})},
	"DLDevice":                 {reflect.TypeOf(C.DLDevice{}), reflect.TypeOf(dlpack.Device{})},
	"DLDataType":               {reflect.TypeOf(C.DLDataType{}), reflect.TypeOf(dlpack.DataType{})},
	"DLTensor":                 {reflect.TypeOf(C.DLTensor{}), reflect.TypeOf(dlpack.Tensor{})},
	"DLManagedTensor":          {reflect.TypeOf(C.DLManagedTensor{}), reflect.TypeOf(dlpack.ManagedTensor{})},
	"DLManagedTensorVersioned": {reflect.TypeOf(C.DLManagedTensorVersioned{}), reflect.TypeOf(dlpack.ManagedTensorVersioned{})},
	"DLPackExchangeAPIHeader":  {reflect.TypeOf(C.DLPackExchangeAPIHeader{}), reflect.TypeOf(dlpack.ExchangeAPIHeader{})},
	"DLPackExchangeAPI":        {reflect.TypeOf(C.DLPackExchangeAPI{}), reflect.TypeOf(dlpack.ExchangeAPI{})},
}
