package rust

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/dlgen/dlgen/internal/ir"
	"github.com/dlgen/dlgen/tests/abi"
	"github.com/dlgen/dlgen/tests/internal/tooltest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rustTriples maps the clang targets of tests/abi, whose C data model the
// header's guards are proven to pick, to the Rust target of the same
// platform. The clang targets left out have none in rustc: i686 Cygwin,
// 32-bit AIX, XCore, and ARM under the old APCS outside Apple.
var rustTriples = map[string]string{
	"x86_64-linux-gnu":        "x86_64-unknown-linux-gnu",
	"i686-linux-gnu":          "i686-unknown-linux-gnu",
	"aarch64-linux-gnu":       "aarch64-unknown-linux-gnu",
	"armv7-linux-gnueabihf":   "armv7-unknown-linux-gnueabihf",
	"i686-pc-windows-msvc":    "i686-pc-windows-msvc",
	"i686-w64-windows-gnu":    "i686-pc-windows-gnu",
	"x86_64-pc-windows-msvc":  "x86_64-pc-windows-msvc",
	"x86_64-w64-windows-gnu":  "x86_64-pc-windows-gnu",
	"aarch64-pc-windows-msvc": "aarch64-pc-windows-msvc",
	"aarch64-w64-windows-gnu": "aarch64-pc-windows-gnullvm",
	"arm64-apple-macos11":     "aarch64-apple-darwin",
	"x86_64-apple-macos10.15": "x86_64-apple-darwin",
	"wasm32-unknown-unknown":  "wasm32-unknown-unknown",
	"riscv64-linux-gnu":       "riscv64gc-unknown-linux-gnu",
	"riscv32-unknown-elf":     "riscv32imac-unknown-none-elf",
	"powerpc64le-linux-gnu":   "powerpc64le-unknown-linux-gnu",
	"s390x-linux-gnu":         "s390x-unknown-linux-gnu",
	"mips-linux-gnu":          "mips-unknown-linux-gnu",
	"mipsel-linux-gnu":        "mipsel-unknown-linux-gnu",
	"mips64-linux-gnuabi64":   "mips64-unknown-linux-gnuabi64",
	"mips64el-linux-gnuabi64": "mips64el-unknown-linux-gnuabi64",
	"loongarch64-linux-gnu":   "loongarch64-unknown-linux-gnu",
	"powerpc64-linux-gnu":     "powerpc64-unknown-linux-gnu",
	"i686-linux-android":      "i686-linux-android",
	"i686-unknown-freebsd":    "i686-unknown-freebsd",
	"i386-apple-macos10.12":   "i686-apple-darwin",
	"armv7-apple-ios9":        "armv7s-apple-ios",
	"armv7k-apple-watchos":    "armv7k-apple-watchos",
	"arm64_32-apple-watchos":  "arm64_32-apple-watchos",
	"thumbv7-pc-windows-msvc": "thumbv7a-pc-windows-msvc",
	"armv5-linux-gnueabi":     "armv5te-unknown-linux-gnueabi",
	"armv7a-none-eabi":        "armv7a-none-eabi",
	"x86_64-linux-gnux32":     "x86_64-unknown-linux-gnux32",
	"powerpc-linux-gnu":       "powerpc-unknown-linux-gnu",
	"sparc-linux-gnu":         "sparc-unknown-linux-gnu",
	"sparcv9-linux-gnu":       "sparc64-unknown-linux-gnu",
	"hexagon-unknown-elf":     "hexagon-unknown-none-elf",
	"nvptx64-nvidia-cuda":     "nvptx64-nvidia-cuda",
	"wasm64-unknown-unknown":  "wasm64-unknown-unknown",
	"avr":                     "avr-none",
	"msp430":                  "msp430-none-elf",
	"m68k-linux-gnu":          "m68k-unknown-linux-gnu",
}

// modelCfgs reads the generated layout.rs: the cfg predicate of each data
// model (the attribute on its C_DATA_MODEL) and the one of compile_error!.
func modelCfgs(t *testing.T) (models map[string]pred, unknown pred) {
	t.Helper()
	s, releases := Releases(t)
	src, err := os.ReadFile(filepath.Join(Crate(t, s, releases[len(releases)-1]), "src", "layout.rs"))
	require.NoError(t, err)
	attr := regexp.MustCompile(`(?s)#\[cfg\((.*?)\)\]\n(pub const C_DATA_MODEL: &str = "([^"]*)";|compile_error!)`)
	models = map[string]pred{}
	for _, m := range attr.FindAllStringSubmatch(string(src), -1) {
		p, err := parsePred(m[1])
		require.NoError(t, err, m[1])
		if m[3] == "" {
			unknown = p
		} else {
			models[m[3]] = p
		}
	}
	require.Len(t, models, len(ir.ABIs), "a C_DATA_MODEL per data model")
	require.NotNil(t, unknown, "the compile_error! of unknown targets")
	return models, unknown
}

// picked evaluates the crate's cfgs on a target: the model it selects (""
// for none) and whether compile_error! is on; it fails t if two models are.
func picked(t *testing.T, triple string, cfg cfgSet, models map[string]pred, unknown pred) (string, bool) {
	t.Helper()
	var on []string
	for _, abi := range ir.ABIs {
		if models[abi.Name].eval(cfg) {
			on = append(on, abi.Name)
		}
	}
	assert.LessOrEqual(t, len(on), 1, "%s: models whose cfg holds", triple)
	name := ""
	if len(on) > 0 {
		name = on[0]
	}
	return name, unknown.eval(cfg)
}

// TestCfgPicksTheCModelOnEveryClangTarget: on the Rust target of every
// platform tests/abi proves the C header on, the crate picks the data
// model the C header picks there, and where the header has none, the
// crate does not build.
func TestCfgPicksTheCModelOnEveryClangTarget(t *testing.T) {
	models, unknown := modelCfgs(t)
	checked := 0
	for _, c := range abi.ClangTargets {
		if len(c.Flags) > 0 && c.Triple != "avr" {
			continue // ARM with -mabi=apcs-gnu: no Rust target
		}
		triple, ok := rustTriples[c.Triple]
		if !ok {
			continue
		}
		cfg := printCfg(t, Rustc(t), triple)
		want := ""
		if c.ABI != nil {
			want = c.ABI.Name
		}
		got, refused := picked(t, triple, cfg, models, unknown)
		assert.Equal(t, want, got, "%s (clang %s): the data model the crate picks", triple, c.Triple)
		assert.Equal(t, want == "", refused, "%s: compile_error! exactly where no model is picked", triple)
		checked++
	}
	assert.Equal(t, len(rustTriples), checked, "every mapped clang target was checked")
	fmt.Printf("Rust crate picks the C header's data model on %d targets\n", checked)
}

// TestCfgNeverPicksAWrongModel evaluates the crate's cfgs on every target
// rustc knows and compares the model picked with the one rustc's own data
// layout for the target implies (the size of a pointer, the alignment of
// an i64): a picked model is always right, and a target with none picked
// does not build.
func TestCfgNeverPicksAWrongModel(t *testing.T) {
	models, unknown := modelCfgs(t)
	nightly := Nightly(t)
	list := tooltest.Run(t, "", nil, Rustc(t), "+"+nightly, "--print", "target-list")
	targets := strings.Fields(list)
	require.Greater(t, len(targets), 100)
	type result struct {
		cfg    cfgSet
		layout targetLayout
		err    error
	}
	results := make([]result, len(targets))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.NumCPU())
	for i, triple := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out, err := tooltest.Try("", nil, Rustc(t), "+"+nightly, "-Z", "unstable-options",
				"--print", "cfg", "--print", "target-spec-json", "--target", triple)
			if err != nil {
				results[i].err = fmt.Errorf("%v: %s", err, out)
				return
			}
			results[i].cfg, results[i].layout, results[i].err = parseCfgAndSpec(out)
		}()
	}
	wg.Wait()
	counts := map[string]int{}
	var unmodelled []string
	for i, triple := range targets {
		r := results[i]
		require.NoError(t, r.err, triple)
		got, refused := picked(t, triple, r.cfg, models, unknown)
		want := r.layout.model()
		if got != "" {
			assert.Equal(t, want, got, "%s (data layout %s): the model the crate picks", triple, r.layout.dataLayout)
		}
		assert.Equal(t, got == "", refused, "%s: compile_error! exactly where no model is picked", triple)
		if got == "" {
			counts["none (does not build)"]++
			if want != "" {
				unmodelled = append(unmodelled, triple)
			}
		} else {
			counts[got]++
		}
	}
	fmt.Printf("Rust crate's data model on %d rustc targets: %v; none though the data layout fits one (the C header names none there either): %s\n",
		len(targets), counts, strings.Join(unmodelled, " "))
}

// cfgSet is `rustc --print cfg`: names and key="value" pairs.
type cfgSet map[string]bool

// targetLayout is what a target spec says of the facts a data model is
// made of: the size of a pointer and the alignment of an i64, and that the
// other integers and pointers are naturally aligned (ir.ABI assumes it).
type targetLayout struct {
	dataLayout  string
	pointerBits int
	align       map[string]int // ABI alignment in bits of "p", "i16", "i32", "i64"
}

// model is the IR's data model with this layout, "" for none.
func (l targetLayout) model() string {
	if l.align["p"] != l.pointerBits || l.align["i16"] != 16 || l.align["i32"] != 32 {
		return ""
	}
	for _, abi := range ir.ABIs {
		if abi.PtrSize*8 == l.pointerBits && abi.Int64Align*8 == l.align["i64"] {
			return abi.Name
		}
	}
	return ""
}

// parseCfgAndSpec splits rustc's output: cfg lines, then the target spec
// as JSON.
func parseCfgAndSpec(out string) (cfgSet, targetLayout, error) {
	brace := strings.Index(out, "{")
	if brace < 0 {
		return nil, targetLayout{}, fmt.Errorf("no target spec in %q", out)
	}
	cfg := cfgSet{}
	for _, l := range strings.Split(out[:brace], "\n") {
		if l = strings.TrimSpace(l); l != "" {
			cfg[l] = true
		}
	}
	var spec struct {
		DataLayout   string `json:"data-layout"`
		PointerWidth any    `json:"target-pointer-width"`
	}
	if err := json.Unmarshal([]byte(out[brace:]), &spec); err != nil {
		return nil, targetLayout{}, err
	}
	bits, err := strconv.Atoi(fmt.Sprint(spec.PointerWidth))
	if err != nil {
		return nil, targetLayout{}, err
	}
	// LLVM's defaults where the data layout says nothing.
	l := targetLayout{dataLayout: spec.DataLayout, pointerBits: bits,
		align: map[string]int{"p": 64, "i16": 16, "i32": 32, "i64": 32}}
	for _, part := range strings.Split(spec.DataLayout, "-") {
		f := strings.Split(part, ":")
		switch {
		case f[0] == "p" && len(f) >= 3: // p:size:abi, address space 0
			l.align["p"], err = strconv.Atoi(f[2])
		case (f[0] == "i16" || f[0] == "i32" || f[0] == "i64") && len(f) >= 2:
			l.align[f[0]], err = strconv.Atoi(f[1])
		}
		if err != nil {
			return nil, targetLayout{}, fmt.Errorf("data layout %q: %v", spec.DataLayout, err)
		}
	}
	return cfg, l, nil
}

// printCfg runs `rustc --print cfg --target triple`, which needs no
// standard library for the target.
func printCfg(t *testing.T, rustc, triple string) cfgSet {
	t.Helper()
	cfg := cfgSet{}
	for _, l := range strings.Split(tooltest.Run(t, "", nil, rustc, "--print", "cfg", "--target", triple), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			cfg[l] = true
		}
	}
	return cfg
}

// pred is a cfg predicate: any(...), all(...), not(...), name or
// key = "value".
type pred struct {
	op   string // "any", "all", "not", or "" for a leaf
	leaf string // name or key="value", as rustc prints it
	args []pred
}

func (p pred) eval(cfg cfgSet) bool {
	switch p.op {
	case "any":
		for _, a := range p.args {
			if a.eval(cfg) {
				return true
			}
		}
		return false
	case "all":
		for _, a := range p.args {
			if !a.eval(cfg) {
				return false
			}
		}
		return true
	case "not":
		return !p.args[0].eval(cfg)
	}
	return cfg[p.leaf]
}

// parsePred parses a cfg predicate as written in Rust source.
func parsePred(s string) (pred, error) {
	s = strings.TrimSpace(s)
	open := strings.Index(s, "(")
	if open < 0 {
		key, value, ok := strings.Cut(s, "=")
		if !ok {
			return pred{leaf: s}, nil
		}
		return pred{leaf: strings.TrimSpace(key) + "=" + strings.TrimSpace(value)}, nil
	}
	op := strings.TrimSpace(s[:open])
	if (op != "any" && op != "all" && op != "not") || !strings.HasSuffix(s, ")") {
		return pred{}, fmt.Errorf("cannot parse cfg predicate %q", s)
	}
	p := pred{op: op}
	depth, start := 0, open+1
	inner := s[:len(s)-1]
	for i := open + 1; i <= len(inner); i++ {
		if i < len(inner) {
			switch inner[i] {
			case '(':
				depth++
				continue
			case ')':
				depth--
				continue
			case ',':
				if depth != 0 {
					continue
				}
			default:
				continue
			}
		}
		if arg := strings.TrimSpace(inner[start:i]); arg != "" {
			a, err := parsePred(arg)
			if err != nil {
				return pred{}, err
			}
			p.args = append(p.args, a)
		}
		start = i + 1
	}
	if op == "not" && len(p.args) != 1 {
		return pred{}, fmt.Errorf("not() takes one predicate: %q", s)
	}
	return p, nil
}

// buildStdTargets have no core to install: the nightly toolchain builds it
// from source (-Zbuild-std, half a minute a target, so one: Apple's 32-bit
// ARM, the model with 4-aligned int64 on a second architecture), and the
// declarations with their layout guards are built there (the safe layer
// would need alloc built too). TestCfgNeverPicksAWrongModel covers every
// other target through rustc's data layout.
var buildStdTargets = []string{"armv7s-apple-ios"}

// TestCrateBuildsForOtherTargets builds the newest release's crate, with
// its safe layer, for targets of each data model: there its layout guards
// hold for rustc's own layout of the target. The targets of toolchain.txt
// (x86 System V and Windows, ARM AAPCS, wasm32, 32-bit PowerPC, RISC-V 32,
// big-endian 64-bit) have core and alloc from rustup.
func TestCrateBuildsForOtherTargets(t *testing.T) {
	s, releases := Releases(t)
	dir := Crate(t, s, releases[len(releases)-1])
	stdTargets := toolchain(t, "target")
	args := []string{"check", "--lib"}
	for _, target := range stdTargets {
		args = append(args, "--target", target)
	}
	RunCargo(t, dir, args...)
	args = []string{"+" + Nightly(t), "check", "--lib", "--no-default-features", "-Zbuild-std=core"}
	for _, target := range buildStdTargets {
		args = append(args, "--target", target)
	}
	RunCargo(t, dir, args...)
	fmt.Printf("Rust crate builds for %s\n", strings.Join(append(append([]string{}, stdTargets...), buildStdTargets...), ", "))
}
