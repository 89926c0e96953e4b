package abi

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/dlgen/dlgen/internal/ir"
	"github.com/dlgen/dlgen/tests/internal/tooltest"
)

// ClangTarget is one target of Debian's clang, compiled for freestanding
// and never linked or run.
type ClangTarget struct {
	Triple string   // the --target triple, such as armv7a-linux-gnueabihf
	Flags  []string // beyond --target
	// ABI is the data model dlgen's guards must pick there; nil where they
	// must stay silent.
	ABI *ir.ABI
	// Measured targets also compare the layout of upstream headers with the
	// IR's; the others only check which model the guards pick.
	Measured bool
	// Go is the GOOS/GOARCH whose C compiler this target stands for.
	Go string
	// Clang is the compiler, "clang" unless the target needs a newer one
	// than Debian's default (LoongArch arrived in clang 16).
	Clang string
}

var (
	abi64 = &ir.ABI64
	abi4  = &ir.ABI32Int64Align4
	abi8  = &ir.ABI32Int64Align8
)

// ClangTargets are the platforms frameworks ship on, and a few more that
// test the edges of the guards' conditions.
var ClangTargets = []ClangTarget{
	{Triple: "x86_64-linux-gnu", ABI: abi64, Measured: true, Go: "linux/amd64"},
	{Triple: "i686-linux-gnu", ABI: abi4, Measured: true, Go: "linux/386"},
	{Triple: "aarch64-linux-gnu", ABI: abi64, Measured: true, Go: "linux/arm64"},
	{Triple: "armv7-linux-gnueabihf", ABI: abi8, Measured: true, Go: "linux/arm"},
	{Triple: "i686-pc-windows-msvc", ABI: abi8, Measured: true, Go: "windows/386"},
	{Triple: "i686-w64-windows-gnu", ABI: abi8, Measured: true},
	{Triple: "x86_64-pc-windows-msvc", ABI: abi64, Measured: true, Go: "windows/amd64"},
	{Triple: "x86_64-w64-windows-gnu", ABI: abi64, Measured: true},
	{Triple: "aarch64-pc-windows-msvc", ABI: abi64, Measured: true, Go: "windows/arm64"},
	{Triple: "aarch64-w64-windows-gnu", ABI: abi64, Measured: true},
	{Triple: "arm64-apple-macos11", ABI: abi64, Measured: true, Go: "darwin/arm64"},
	{Triple: "x86_64-apple-macos10.15", ABI: abi64, Measured: true, Go: "darwin/amd64"},
	{Triple: "wasm32-unknown-unknown", ABI: abi8, Measured: true},
	{Triple: "riscv64-linux-gnu", ABI: abi64, Measured: true, Go: "linux/riscv64"},
	{Triple: "riscv32-unknown-elf", ABI: abi8, Measured: true},
	{Triple: "powerpc64le-linux-gnu", ABI: abi64, Measured: true, Go: "linux/ppc64le"},
	{Triple: "s390x-linux-gnu", ABI: abi64, Measured: true, Go: "linux/s390x"},
	{Triple: "mips-linux-gnu", ABI: abi8, Measured: true, Go: "linux/mips"},
	{Triple: "mipsel-linux-gnu", ABI: abi8, Measured: true, Go: "linux/mipsle"},
	{Triple: "mips64-linux-gnuabi64", ABI: abi64, Measured: true, Go: "linux/mips64"},
	{Triple: "mips64el-linux-gnuabi64", ABI: abi64, Go: "linux/mips64le"},
	{Triple: "loongarch64-linux-gnu", ABI: abi64, Measured: true, Go: "linux/loong64", Clang: "clang-16"},
	{Triple: "powerpc64-linux-gnu", ABI: abi64, Go: "linux/ppc64"},
	{Triple: "i686-pc-cygwin", ABI: abi8},
	{Triple: "i686-linux-android", ABI: abi4},
	{Triple: "i686-unknown-freebsd", ABI: abi4},
	{Triple: "i386-apple-macos10.12", ABI: abi4},
	{Triple: "armv7-apple-ios9", ABI: abi4},
	{Triple: "armv7k-apple-watchos", ABI: abi8},
	{Triple: "arm64_32-apple-watchos", ABI: abi8},
	{Triple: "thumbv7-pc-windows-msvc", ABI: abi8},
	{Triple: "armv5-linux-gnueabi", ABI: abi8},
	{Triple: "armv7a-none-eabi", ABI: abi8},
	{Triple: "x86_64-linux-gnux32", ABI: abi8},
	{Triple: "powerpc-linux-gnu", ABI: abi8},
	{Triple: "powerpc-ibm-aix", ABI: abi8},
	{Triple: "sparc-linux-gnu", ABI: abi8},
	{Triple: "sparcv9-linux-gnu", ABI: abi64},
	{Triple: "hexagon-unknown-elf", ABI: abi8},
	{Triple: "nvptx64-nvidia-cuda", ABI: abi64},
	{Triple: "wasm64-unknown-unknown", ABI: abi64},
	// No model fits, or none can be told apart: no guards.
	{Triple: "armv7-linux-gnueabihf", Flags: []string{"-mabi=apcs-gnu"}},                                      // int64 4-aligned, unlike AAPCS
	{Triple: "avr", Flags: []string{"-mmcu=atmega328p", "-Wno-avr-rtlib-linking-quirks"}}, {Triple: "msp430"}, // 16-bit pointers
	{Triple: "m68k-linux-gnu"}, // GCC aligns int64 to 2 there
	{Triple: "xcore"},
}

// Name is the triple and any flags.
func (c ClangTarget) Name() string { return strings.Join(append([]string{c.Triple}, c.Flags...), " ") }

// CC is the clang that compiles for c.
func (c ClangTarget) CC() string {
	if c.Clang != "" {
		return c.Clang
	}
	return "clang"
}

// Target turns a measured clang target into a Target for Measure.
func (c ClangTarget) Target() Target {
	return Target{Name: "clang " + c.Name(), CC: c.CC(), ABI: *c.ABI, Clang: &c}
}

var resourceDirs sync.Map // compiler -> its resource directory

func resourceDir(cc string) string {
	if dir, ok := resourceDirs.Load(cc); ok {
		return dir.(string)
	}
	out, err := tooltest.Try("", nil, cc, "-print-resource-dir")
	if err != nil {
		return ""
	}
	dir, _ := resourceDirs.LoadOrStore(cc, strings.TrimSpace(out))
	return dir.(string)
}

// ClangArgs are the arguments that compile for c without any C library:
// only the compiler's own stdint.h and stddef.h.
func (c ClangTarget) ClangArgs(t testing.TB) []string {
	t.Helper()
	tooltest.Require(t, c.CC())
	dir := resourceDir(c.CC())
	if dir == "" {
		t.Fatal(c.CC() + " -print-resource-dir failed")
	}
	args := []string{"--target=" + c.Triple, "-ffreestanding", "-nostdinc", "-isystem", filepath.Join(dir, "include"),
		"-Wno-unused-command-line-argument"} // the driver's, not the header's

	return append(args, c.Flags...)
}

var llvmArray = regexp.MustCompile(`@dlgen_probe = [^\[]*\[\d+ x i64\] \[([^\]]*)\]`)

// measureClang compiles the probes to LLVM IR and reads the initializer of
// dlgen_probe: the values as the target's C compiler computed them.
func measureClang(t testing.TB, c ClangTarget, source, includeDir string) []uint64 {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "probe.c")
	if err := os.WriteFile(src, []byte(source), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append(c.ClangArgs(t), "-std=gnu11", "-DDLGEN_NO_LAYOUT_GUARDS", "-I", includeDir, "-S", "-emit-llvm", "-o", "-", src)
	m := llvmArray.FindStringSubmatch(tooltest.Run(t, dir, nil, c.CC(), args...))
	if m == nil {
		t.Fatalf("%s: no dlgen_probe array in clang's output", c.Name())
	}
	var vals []uint64
	for _, v := range strings.Split(m[1], ",") {
		n, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimSpace(v), "i64 "), 10, 64)
		if err != nil {
			t.Fatalf("%s: %q in clang's output: %v", c.Name(), v, err)
		}
		vals = append(vals, n)
	}
	return vals
}
