package devlink

import (
	"fmt"
	"strings"
)

// Filter decides which lines to show, in ESP-IDF monitor's --print_filter
// syntax: space-separated `tag:L` items with L one of N E W I D V * (case
// insensitive); a bare `tag` means V; `*:L` sets the level for tags not
// listed. An empty filter shows everything. A non-empty filter without a `*`
// item hides unlisted tags. Lines that are not log lines are shown when the
// default level is above N, so `hello_world` hides them and `*:N` hides
// everything. This matches esp-idf-monitor's LineMatcher and its host-test
// vectors.
type Filter struct {
	tags map[string]int
	def  int // level rank for unlisted tags
	src  string
}

var filterLevels = map[string]int{"N": 0, "E": 1, "W": 2, "I": 3, "D": 4, "V": 5, "*": 5, "": 5}

// ParseFilter parses a filter expression. Errors name the bad item:
// `no tag specified in filter ":E"`, `unknown level in filter "wifi:X"`,
// `too many ":" in filter "a:b:c"`.
func ParseFilter(s string) (*Filter, error) {
	f := &Filter{tags: map[string]int{}, src: s}
	items := strings.Fields(s)
	if len(items) == 0 {
		f.def = 5
		return f, nil
	}
	for _, it := range items {
		tag, lev, has := strings.Cut(it, ":")
		rank := 5
		if has {
			if tag == "" {
				return nil, fmt.Errorf("no tag specified in filter %q", it)
			}
			if strings.Contains(lev, ":") {
				return nil, fmt.Errorf("too many \":\" in filter %q (want tag:L)", it)
			}
			r, ok := filterLevels[strings.ToUpper(lev)]
			if !ok {
				return nil, fmt.Errorf("unknown level in filter %q (want one of N E W I D V *)", it)
			}
			rank = r
		}
		f.tags[tag] = rank
	}
	if r, ok := f.tags["*"]; ok {
		f.def = r
		delete(f.tags, "*")
	}
	return f, nil
}

// String returns the filter as given.
func (f *Filter) String() string { return f.src }

// Match reports whether l passes the filter. It does not allocate.
func (f *Filter) Match(l *Line) bool {
	if f == nil {
		return true
	}
	if l.Level != 0 && len(l.Tag) > 0 {
		if r, ok := f.tags[string(l.Tag)]; ok {
			return r >= l.Level.rank()
		}
		return f.def >= l.Level.rank()
	}
	return f.def > 0
}

// ShowsAll reports whether the filter passes every line (so a caller can
// skip matching).
func (f *Filter) ShowsAll() bool { return f == nil || (f.def == 5 && len(f.tags) == 0) }
