package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/dlgen/dlgen"
	"github.com/dlgen/dlgen/internal/backend"
	_ "github.com/dlgen/dlgen/internal/backend/all"
	"github.com/dlgen/dlgen/internal/generate"
	"github.com/dlgen/dlgen/internal/schema"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the process: it parses the flags, hands the request
// to generate.Run and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dlgen", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // its errors are reported below, in dlgen's words
	fs.Usage = func() {}     // -h prints the manual; a mistake, one line and a hint
	var req generate.Request
	fs.StringVar(&req.Lang, "lang", "", "comma-separated languages to generate: "+strings.Join(generate.Languages(), ",")+" (default all but conformance, the conformance kit)")
	fs.StringVar(&req.Out, "out", "", "the directory to write into (required to generate or -check; -out . for the current one)")
	fs.StringVar(&req.SchemaFile, "schema", "", "schema file (default: the embedded "+schema.DefaultFile+")")
	fs.StringVar(&req.Version, "dlpack-version", "", "DLPack release to emit (default: the newest in the schema)")
	fs.BoolVar(&req.Check, "check", false, "write nothing; print a diff and exit 1 if -out is not exactly what dlgen would write")
	backendFlags := map[string]*string{}
	for _, r := range backend.Registered() {
		for _, o := range r.Options {
			backendFlags[o.Flag] = fs.String(o.Flag, "", o.Usage)
		}
	}
	fs.StringVar(&req.DiffFrom, "diff", "", "write nothing; report what changed from release `X.Y` to -dlpack-version, exit 1 if anything breaks")
	fs.StringVar(&req.Identify, "identify", "", "write nothing; name the release the DLPack header `FILE.h` is and list how it differs from it, exit 1 if it does")
	fs.BoolVar(&req.SchemaYAML, "schema-yaml", false, "with -identify: print, as schema YAML, what the header adds to the schema's newest release")
	fs.BoolVar(&req.DiffRules, "diff-rules", false, "write nothing; list the rules of -diff with their category and purpose")
	showVersion := fs.Bool("version", false, "print dlgen's version and exit")
	switch err := fs.Parse(args); {
	case errors.Is(err, flag.ErrHelp): // -h, -help, --help: the manual, as go doc prints it
		fmt.Fprint(stdout, manual())
		return 0
	case err != nil:
		mistake(stderr, flagError(fs, err))
		return 2
	}
	if *showVersion {
		fmt.Fprintln(stdout, "dlgen", dlgen.Tag)
		return 0
	}
	if what := valueMistake(fs); what != "" {
		mistake(stderr, what)
		return 2
	}
	if fs.NArg() > 0 {
		mistake(stderr, fmt.Sprintf("unexpected argument %q: dlgen takes flags only, each value after its flag (-out DIR)", fs.Arg(0)))
		return 2
	}
	fs.Visit(func(f *flag.Flag) { req.LangGiven = req.LangGiven || f.Name == "lang" })
	req.BackendOptions = map[string]string{}
	for flag, value := range backendFlags {
		req.BackendOptions[flag] = *value
	}
	err := generate.Run(req, stdout)
	var (
		usageErr   *generate.UsageError
		drift      *generate.DriftError
		breaking   *generate.BreakingChangeError
		positioned schema.ErrorList
	)
	switch {
	case err == nil:
		return 0
	case errors.As(err, &drift) && drift.Dir != "":
		fmt.Fprintln(stderr, "dlgen:", drift.Error()+driftFix(args, drift))
		return 1
	case errors.As(err, &drift), errors.As(err, &breaking):
		fmt.Fprintln(stderr, "dlgen:", err)
		return 1
	case errors.As(err, &positioned):
		fmt.Fprintln(stderr, err) // file:line:col: message, one per line
	case errors.As(err, &usageErr):
		mistake(stderr, err.Error())
	default:
		fmt.Fprintln(stderr, "dlgen:", err)
	}
	return 2
}

// mistake reports a usage error: what is wrong and its fix on one line,
// then where the manual is.
func mistake(stderr io.Writer, what string) {
	fmt.Fprintln(stderr, "dlgen:", what)
	fmt.Fprintln(stderr, "run dlgen -h for usage")
}

// valueMistake names a flag given on the command line whose value is
// wrong in a way the flag package lets pass: a flag that took the next flag
// as its value (-dlpack-version -out o). It returns "" when there is none.
func valueMistake(fs *flag.FlagSet) string {
	var what string
	fs.Visit(func(f *flag.Flag) {
		if what != "" {
			return
		}
		if _, isBool := f.Value.(interface{ IsBoolFlag() bool }); isBool {
			return
		}
		value := f.Value.String()
		name, _, _ := strings.Cut(strings.TrimLeft(value, "-"), "=")
		if strings.HasPrefix(value, "-") && fs.Lookup(name) != nil {
			what = fmt.Sprintf("-%s took %q as its value; give -%s its value first (-%s VALUE %s ...)", f.Name, value, f.Name, f.Name, value)
		}
	})
	return what
}

// flagError is what the flag package found wrong with the command line, in
// its words; an unknown flag near a known one (-lnag) gets "did you mean".
func flagError(fs *flag.FlagSet, err error) string {
	name, unknown := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !unknown {
		return err.Error()
	}
	if near := nearestFlag(fs, name); near != "" {
		return fmt.Sprintf("%s; did you mean -%s?", err, near)
	}
	return err.Error()
}

// nearestFlag is the flag of fs a slip of the keyboard away from name (at
// most two letters added, dropped, changed or swapped, and fewer than name
// has), the nearest, or "" when none is.
func nearestFlag(fs *flag.FlagSet, name string) string {
	best, bestDistance := "", 3
	fs.VisitAll(func(f *flag.Flag) {
		if d := editDistance(name, f.Name); d < bestDistance && d < len(name) {
			best, bestDistance = f.Name, d
		}
	})
	return best
}

// editDistance is the optimal string alignment distance between a and b:
// the fewest letters inserted, deleted, substituted, or adjacent letters
// swapped, that turn a into b.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// driftFix is the rest of -check's line after what is stale or missing:
// the command that brings -out up to date. Under pre-commit, whose hook has
// no dlgen on PATH, that is the hook's own command line; where a
// //go:generate line of the module around the working directory writes
// -out, go generate; else dlgen without -check.
func driftFix(args []string, drift *generate.DriftError) string {
	when := "to update it"
	if drift.Missing {
		when = "first"
	}
	if os.Getenv("PRE_COMMIT") != "" {
		return fmt.Sprintf("; run the hook's dlgen without -check %s:\n  %s", when, updateCommand(args))
	}
	if where := goGenerateLine(drift.Dir); where != "" {
		return fmt.Sprintf("; run go generate ./... %s (%s writes it)", when, where)
	}
	return "; run dlgen without -check " + when
}

// updateCommand is the command line that updates what args checked: this
// executable with args less -check, quoted for a POSIX shell.
func updateCommand(args []string) string {
	exe, err := os.Executable()
	if err != nil {
		exe = "dlgen"
	}
	words := []string{shellQuote(exe)}
	for _, a := range args {
		if a != "-check" && a != "--check" && a != "-check=true" && a != "--check=true" {
			words = append(words, shellQuote(a))
		}
	}
	return strings.Join(words, " ")
}

// shellQuote leaves words of safe characters alone and single-quotes the
// rest.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=.,:/@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
