package python

import (
	"strings"
	"testing"
)

func TestSplitSourceTakesTheImportsAfterTheLeadingComments(t *testing.T) {
	src := "# what this is\n# more\nimport ctypes\nfrom x import (\n    a,\n    b,\n)\n\nimport os\n# the body\ndef f():\n    import sys\n"
	imports, body := splitSource(src)
	want := []string{"import ctypes", "from x import (\n    a,\n    b,\n)", "import os"}
	if strings.Join(imports, "|") != strings.Join(want, "|") {
		t.Errorf("imports = %q, want %q", imports, want)
	}
	if !strings.HasPrefix(body, "# the body\ndef f():") {
		t.Errorf("body starts %q", body)
	}
}

func TestImportBlockMergesAndOrders(t *testing.T) {
	got := importBlock([]string{
		"import os", "from typing import NamedTuple", "cimport dlpack", "import ctypes",
		"from libc.stdint cimport int64_t", "from libc.stdint cimport int32_t, int64_t", "import os",
	})
	want := "cimport dlpack\nfrom libc.stdint cimport int32_t, int64_t\nimport ctypes\nimport os\nfrom typing import NamedTuple"
	if got != want {
		t.Errorf("importBlock =\n%s\nwant\n%s", got, want)
	}
}

func TestWrapCallBreaksOnlyLongCallsAtTopLevelCommas(t *testing.T) {
	short := "ctypes.CFUNCTYPE(None, ctypes.c_void_p)"
	if got := wrapCall("X = ", short); got != short {
		t.Errorf("a short call was wrapped: %q", got)
	}
	long := "ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.POINTER(DLManagedTensorVersioned)), " +
		"ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p))"
	want := "ctypes.CFUNCTYPE(\n    ctypes.c_int,\n    ctypes.POINTER(ctypes.POINTER(DLManagedTensorVersioned)),\n" +
		"    ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p),\n)"
	if got := wrapCall("DLPackManagedTensorAllocator = ", long); got != want {
		t.Errorf("wrapCall =\n%s\nwant\n%s", got, want)
	}
}

func TestPylistSortsConstantsThenClassesThenTheRest(t *testing.T) {
	got := pylist("__all__", []string{"to_managed", "Tensor", "DLPACK_MAJOR_VERSION", "DLDevice", "CAPSULE_NAME"})
	want := "__all__ = [\n    \"CAPSULE_NAME\",\n    \"DLPACK_MAJOR_VERSION\",\n    \"DLDevice\",\n    \"Tensor\",\n    \"to_managed\",\n]"
	if got != want {
		t.Errorf("pylist =\n%s\nwant\n%s", got, want)
	}
}

func TestPackageCimportsItsOwnDeclarationsRelatively(t *testing.T) {
	b := Backend{Package: "mylib._vendor.python"}
	for stmt, want := range map[string]string{
		"cimport dlpack":                          "from . cimport dlpack",
		"from dlpack cimport DLTensor":            "from .dlpack cimport DLTensor",
		"from dlpack cimport (\n    DLTensor,\n)": "from .dlpack cimport (\n    DLTensor,\n)",
		"cimport cython":                          "cimport cython",
		"from dlpack_cython cimport Tensor":       "from dlpack_cython cimport Tensor",
		"from libc.stdint cimport int64_t":        "from libc.stdint cimport int64_t",
	} {
		if got := b.ownCimport(stmt); got != want {
			t.Errorf("ownCimport(%q) = %q, want %q", stmt, got, want)
		}
		if got := (Backend{}).ownCimport(stmt); got != stmt {
			t.Errorf("top-level ownCimport(%q) = %q", stmt, got)
		}
	}
}

func TestCheckPackage(t *testing.T) {
	for _, ok := range []string{"python", "mylib._vendor.python", "a1.b_2.python"} {
		if err := CheckPackage(ok); err != nil {
			t.Errorf("CheckPackage(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "mylib", "mylib._vendor", ".python", "mylib..python", "1lib.python", "my-lib.python", "class.python", "mylib.python."} {
		if err := CheckPackage(bad); err == nil {
			t.Errorf("CheckPackage(%q) accepted", bad)
		}
	}
}
