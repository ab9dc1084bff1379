package snapshot

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"unicode/utf8"

	"tailscale.com/ipn/ipnstate"
	"tailscale.com/types/key"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes/join"
)

// maxElems bounds every JSON array and object of a snapshot read, before
// it is decoded, so a crafted file of millions of entries costs a scan,
// not their decoding. It is twice the largest list capLists keeps
// (MaxPeers peers, their WhoIs replies and ourselves), so a list it cuts
// is absurd, and capLists still reports a merely long one exactly.
const maxElems = 2 * (MaxPeers + 1)

// sanitizeJSON returns b with every JSON string in it, object keys
// included, sanitised with safetext.Clean, and every array and object cut
// to its first maxElems entries; cuts are the entry counts of those cut.
// A saved snapshot comes from outside, and every string of it (the
// tuning report, the board's evidence, health text, any Hostinfo field)
// may be shown, so none may carry an escape sequence or control
// character, whatever field it sits in. Strings of printable ASCII
// without escapes (nearly all) are passed over; the document's structure
// is kept, so it decodes as before. b is not modified; the result shares
// it when nothing changed. A malformed document is left for the decoder
// to report.
func sanitizeJSON(b []byte) (_ []byte, cuts []int) {
	var out []byte
	last := 0 // b[:last] is in out already
	// counts holds, per open array or object, the commas between its
	// entries so far.
	var counts []int
	skipDepth := 0 // > 0: skipping the rest of the container at this depth
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case '[', '{':
			counts = append(counts, 0)
			continue
		case ']', '}':
			if len(counts) == 0 {
				return b, nil // malformed: the decoder says so
			}
			if skipDepth == len(counts) {
				cuts = append(cuts, counts[len(counts)-1]+1)
				last, skipDepth = i, 0 // the closing bracket is kept
			}
			counts = counts[:len(counts)-1]
			continue
		case ',':
			if d := len(counts); d > 0 {
				counts[d-1]++
				if skipDepth == 0 && counts[d-1] == maxElems {
					out = append(out, b[last:i]...)
					skipDepth = d
				}
			}
			continue
		case '"':
		default:
			continue
		}
		// A string literal from i to j (its closing quote).
		plain := true
		j := i + 1
		for ; j < len(b); j++ {
			c := b[j]
			if c == '"' {
				break
			}
			if c == '\\' {
				plain = false
				j++
				continue
			}
			if c < 0x20 || c >= 0x7f {
				plain = false
			}
		}
		if j >= len(b) {
			return b, nil // unterminated: the decoder reports it
		}
		if !plain && skipDepth == 0 {
			if clean, ok := cleanLiteral(b[i : j+1]); ok {
				out = append(out, b[last:i]...)
				out = append(out, clean...)
				last = j + 1
			}
		}
		i = j
	}
	if out == nil && last == 0 {
		return b, cuts
	}
	return append(out, b[last:]...), cuts
}

// cleanLiteral returns the JSON string literal lit sanitised, and false
// when it needs no change (or does not decode: the decoder reports that).
func cleanLiteral(lit []byte) ([]byte, bool) {
	var s string
	if err := json.Unmarshal(lit, &s); err != nil {
		return nil, false
	}
	c := safetext.Clean(s)
	if c == s && utf8.Valid(lit) {
		return nil, false
	}
	out, err := json.Marshal(c)
	if err != nil {
		return nil, false
	}
	return out, true
}

// Bounds on the lists of a snapshot read (Decode, paste.Parse): past them the
// rest is left out and a warning says how much, so a crafted file cannot
// make a reader spend minutes and gigabytes, and nothing is dropped
// silently. docs/snapshots.md lists them.
const (
	// MaxPeers bounds the peers (Status.Peer), and with them the WhoIs
	// replies, carried histories and path-change lists.
	MaxPeers = 20000
	// MaxWarnings bounds Warnings.
	MaxWarnings = 1000
	// MaxListed bounds each other list: pasted inputs recognised, lines
	// ignored, the tuning report's connections and notes, a status's
	// health messages.
	MaxListed = 1000
)

// capLists enforces the bounds above on f, adding a warning for each list
// cut.
func (f *File) capLists() {
	var notes []string
	cut := func(what string, n, limit int) {
		notes = append(notes, fmt.Sprintf("this snapshot lists %d %s; only the first %d are read (a snapshot is read with at most %d)", n, what, limit, limit))
	}
	if st := f.Status; st != nil {
		if n := len(st.Peer); n > MaxPeers {
			keys := slices.SortedFunc(maps.Keys(st.Peer), func(a, b key.NodePublic) int {
				pa, pb := st.Peer[a], st.Peer[b]
				var ia, ib string
				if pa != nil {
					ia = string(pa.ID)
				}
				if pb != nil {
					ib = string(pb.ID)
				}
				return cmp.Or(cmp.Compare(ia, ib), a.Compare(b))
			})
			kept := make(map[key.NodePublic]*ipnstate.PeerStatus, MaxPeers)
			for _, k := range keys[:MaxPeers] {
				kept[k] = st.Peer[k]
			}
			st.Peer = kept
			cut("peers", n, MaxPeers)
		}
		if n := len(st.Health); n > MaxListed {
			st.Health = st.Health[:MaxListed]
			cut("health messages", n, MaxListed)
		}
	}
	if n := len(f.WhoIs); n > MaxPeers+1 {
		f.WhoIs = f.WhoIs[:MaxPeers+1]
		cut("WhoIs replies", n, MaxPeers+1)
	}
	if n := len(f.History.Peers); n > MaxPeers {
		f.History.Peers = capMap(f.History.Peers, MaxPeers)
		cut("peer histories", n, MaxPeers)
	}
	if n := len(f.PathChanges); n > MaxPeers {
		f.PathChanges = capMap(f.PathChanges, MaxPeers)
		cut("peers' path changes", n, MaxPeers)
	}
	long := 0
	for id, chs := range f.PathChanges {
		if len(chs) > join.HistoryLen {
			f.PathChanges[id] = chs[len(chs)-join.HistoryLen:]
			long++
		}
	}
	if long > 0 {
		notes = append(notes, fmt.Sprintf("%d peers list more than %d path changes; only the newest %d of each are read", long, join.HistoryLen, join.HistoryLen))
	}
	if n := len(f.Inputs); n > MaxListed {
		f.Inputs = f.Inputs[:MaxListed]
		cut("recognised inputs", n, MaxListed)
	}
	if n := len(f.Ignored); n > MaxListed {
		f.Ignored = f.Ignored[:MaxListed]
		cut("ignored lines", n, MaxListed)
	}
	if t := f.Tuning; t != nil {
		if n := len(t.Conns); n > MaxListed {
			t.Conns = t.Conns[:MaxListed]
			cut("tailnet TCP connections", n, MaxListed)
		}
		if n := len(t.Notes); n > MaxListed {
			t.Notes = t.Notes[:MaxListed]
			cut("tuning notes", n, MaxListed)
		}
	}
	if n := len(f.Warnings); n > MaxWarnings {
		f.Warnings = f.Warnings[:MaxWarnings]
		cut("warnings", n, MaxWarnings)
	}
	f.Warnings = append(f.Warnings, safetext.All(notes)...)
}

// capMap keeps the first limit entries of m by key.
func capMap[K ~string, V any](m map[K]V, limit int) map[K]V {
	out := make(map[K]V, limit)
	for _, k := range slices.Sorted(maps.Keys(m))[:limit] {
		out[k] = m[k]
	}
	return out
}
