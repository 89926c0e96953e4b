package c

import (
	"fmt"
	"strings"
)

// The hand-written helpers (runtime/dlpack_helpers.h) are the same for
// every release; where releases differ they ask a feature macro the
// template defines (#if DLGEN_HAS_VERSIONED ... #else ... #endif). A
// release's header carries only its own side of each such block, as
// unifdef would leave it: a 0.8 header then neither compiles nor mentions
// code and comments about tensors 0.8 does not have. Every other
// conditional (the C dialect, Py_PYTHON_H) stays for the compiler.

// withFeatures is src with each #if on a macro of features resolved: the
// lines of the side the macro's value selects are kept, the directives and
// the other side dropped. Those blocks nest in others; they take no #elif,
// and a feature macro anywhere else in a condition (#if A || B, a
// continued line) is an error rather than a guess. Directives are read at
// the start of a line, comments or not: the file is dlgen's own.
func withFeatures(src string, features map[string]bool) (string, error) {
	type block struct {
		feature bool // an #if on a feature macro
		keep    bool // its lines are kept (a feature block's current side)
	}
	var out strings.Builder
	var open []block
	kept := func() bool {
		for _, b := range open {
			if !b.keep {
				return false
			}
		}
		return true
	}
	continued := false // the line goes on an #if or #elif's condition
	for n, line := range strings.SplitAfter(src, "\n") {
		directive, arg, rest := cDirective(line)
		if condition := directive == "if" || directive == "elif"; condition || continued {
			for name := range features {
				if strings.Contains(line, name) && (!condition || directive == "elif" || arg != name || !onlyComment(rest)) {
					return "", fmt.Errorf("line %d: %s must be alone in its #if (a comment may follow): %q", n+1, name, strings.TrimSpace(line))
				}
			}
			continued = strings.HasSuffix(strings.TrimRight(line, "\r\n"), "\\")
		}
		switch directive {
		case "if":
			if on, ok := features[arg]; ok {
				open = append(open, block{feature: true, keep: on})
				continue
			}
			open = append(open, block{keep: true})
		case "ifdef", "ifndef":
			open = append(open, block{keep: true})
		case "elif", "else", "endif":
			if len(open) == 0 {
				return "", fmt.Errorf("line %d: #%s without #if", n+1, directive)
			}
			top := &open[len(open)-1]
			if top.feature {
				switch directive {
				case "elif":
					return "", fmt.Errorf("line %d: #elif in a block on a feature macro", n+1)
				case "else":
					top.keep = !top.keep
				default:
					open = open[:len(open)-1]
				}
				continue
			}
			if directive == "endif" {
				open = open[:len(open)-1]
			}
		}
		if kept() {
			out.WriteString(line)
		}
	}
	if len(open) != 0 {
		return "", fmt.Errorf("%d #if blocks left open", len(open))
	}
	return out.String(), nil
}

// cDirective is a preprocessor line's directive, the identifier after it
// and what follows that ("if", "DLGEN_HAS_VERSIONED", " /* ... */\n"), or
// "" for any other line.
func cDirective(line string) (directive, arg, rest string) {
	rest, ok := strings.CutPrefix(strings.TrimLeft(line, " \t"), "#")
	if !ok {
		return "", "", ""
	}
	directive, rest = identifier(strings.TrimLeft(rest, " \t"))
	arg, rest = identifier(strings.TrimLeft(rest, " \t"))
	return directive, arg, rest
}

// identifier splits s after its leading C identifier characters.
func identifier(s string) (string, string) {
	end := strings.IndexFunc(s, func(c rune) bool {
		return !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9')
	})
	if end < 0 {
		return s, ""
	}
	return s[:end], s[end:]
}

// onlyComment reports whether rest, the end of a directive's line, holds
// nothing but blanks and a comment that ends on it.
func onlyComment(rest string) bool {
	rest = strings.TrimSpace(rest)
	if c, ok := strings.CutPrefix(rest, "/*"); ok {
		return strings.HasSuffix(c, "*/") && !strings.Contains(strings.TrimSuffix(c, "*/"), "*/")
	}
	return rest == "" || strings.HasPrefix(rest, "//") && !strings.HasSuffix(rest, "\\")
}
