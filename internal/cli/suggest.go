package cli

import (
	"flag"
	"strings"
)

// suggest returns the candidate closest to typed when it is a likely typo
// of it: an edit distance (optimal string alignment: insertions,
// deletions, substitutions and swaps of two neighbours each count 1) of
// at most 1 for words up to 4 letters and 2 beyond, or typed being a
// prefix of exactly one candidate. "" when nothing is close.
func suggest(typed string, candidates []string) string {
	typed = strings.ToLower(typed)
	if typed == "" {
		return ""
	}
	best, bestD := "", 0
	for _, c := range candidates {
		if c == "" {
			continue
		}
		d := editDistance(typed, strings.ToLower(c))
		if best == "" || d < bestD {
			best, bestD = c, d
		}
	}
	limit := 2
	if len(typed) <= 4 {
		limit = 1
	}
	if best != "" && bestD <= limit {
		return best
	}
	var prefixed []string
	for _, c := range candidates {
		if c != "" && strings.HasPrefix(strings.ToLower(c), typed) {
			prefixed = append(prefixed, c)
		}
	}
	if len(prefixed) == 1 {
		return prefixed[0]
	}
	return ""
}

// editDistance is the optimal string alignment distance between a and b,
// by bytes (command and flag names are ASCII).
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// undefinedFlag returns the flag name in a flag package error "flag
// provided but not defined: -name", or "".
func undefinedFlag(err error) string {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: ")
	if !ok {
		return ""
	}
	return strings.TrimLeft(name, "-")
}

// flagNames lists the flags of fs.
func flagNames(fs *flag.FlagSet) []string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return names
}
