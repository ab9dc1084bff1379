package crash

import "bytes"

// Marker is the kind of crash report a line starts (Find).
type Marker uint8

// The crash markers Find tells apart.
const (
	NoMarker            Marker = iota
	MarkerPanic                // `Guru Meditation Error: …`
	MarkerAbort                // `abort() was called at PC …`
	MarkerStackOverflow        // `***ERROR*** A stack overflow in task …`
	MarkerBacktrace            // `Backtrace: 0x…`
	MarkerCorruptHeap          // `CORRUPT HEAP: …`
)

// Crash reports do not always start a line. A crash cuts the line being
// printed short, so its first line can be glued onto that text
// (`… phy_init: phGuru Meditation Error: Core  0 panic'ed …`); a reset or
// a UART glitch can eat its first letters (`uru Meditation Error: …`) or
// leave a CR in the middle. Find finds such markers anywhere in a line
// by a part of them that survives, then walks back over what is left of
// the marker's start.

// Anchors: the part of each marker that is searched for. Each starts with
// a byte that is rare in log text, so that searching every line is cheap
// (bytes.Index skips to the first byte with IndexByte).
var (
	anchorPanicked   = []byte("'ed (")
	anchorMeditation = []byte("Meditation Error")
	anchorAbort      = []byte("() was called at PC")
	anchorOverflow   = []byte("*** A stack overflow in task")
	anchorBacktrace  = []byte("ktrace:")
	anchorHeap       = []byte("CORRUPT HEAP:")
	anchorCore       = []byte("Core")
)

// Find looks for a crash report's first line anywhere in b. It returns
// the marker and the offset in b where the (possibly damaged) marker
// starts, or NoMarker and -1. It does not allocate.
func Find(b []byte) (Marker, int) {
	if len(b) < 10 {
		return NoMarker, -1
	}
	cr := bytes.IndexByte(b, '\r') >= 0
	if p := indexCR(b, anchorPanicked, cr); p >= 5 && bytes.Equal(b[p-5:p], []byte("panic")) {
		// `Guru Meditation Error: Core  0 panic'ed (…)`: walk back over
		// the core number, then over what is left of the marker.
		q := p - 5
		for _, digit := range [...]bool{false, true, false} {
			for q > 0 && (b[q-1] == ' ' && !digit || isDigit(b[q-1]) && digit) {
				q--
			}
		}
		start, _ := markerStart(b, q, "Guru Meditation Error: Core")
		return MarkerPanic, start
	}
	if m := indexCR(b, anchorMeditation, cr); m >= 0 {
		start, _ := markerStart(b, m, "Guru ")
		return MarkerPanic, start
	}
	if a := indexCR(b, anchorAbort, cr); a >= 0 {
		start, _ := markerStart(b, a, "abort")
		return MarkerAbort, start
	}
	if s := indexCR(b, anchorOverflow, cr); s >= 0 {
		start, _ := markerStart(b, s, "***ERROR")
		return MarkerStackOverflow, start
	}
	if k := indexCR(b, anchorBacktrace, cr); k >= 0 {
		rest := b[k+len(anchorBacktrace):]
		if bytes.HasPrefix(rest, []byte(" 0x")) || bytes.HasPrefix(rest, []byte("0x")) {
			start, _ := markerStart(b, k, "Bac")
			return MarkerBacktrace, start
		}
	}
	if i := indexCR(b, anchorHeap, cr); i >= 0 {
		return MarkerCorruptHeap, i
	}
	return NoMarker, -1
}

// indexCR is bytes.Index, except that when cr is set (b holds a CR) a CR
// in b may interrupt the match (`Guru Medi\rtation`). It returns the offset
// of the match's first byte.
func indexCR(b, pat []byte, cr bool) int {
	if i := indexFirst(b, pat); i >= 0 || !cr {
		return i
	}
	for s := 0; s < len(b); s++ {
		if b[s] != pat[0] {
			continue
		}
		i, j := s, 0
		for i < len(b) && j < len(pat) {
			switch {
			case b[i] == pat[j]:
				i++
				j++
			case b[i] == '\r' && j > 0:
				i++
			default:
				j = -1
			}
			if j < 0 {
				break
			}
		}
		if j == len(pat) {
			return s
		}
	}
	return -1
}

// indexFirst is bytes.Index for a pattern whose first byte is rare: it
// skips with bytes.IndexByte (vectorised) and compares only where that
// byte occurs, which on short lines beats bytes.Index's brute force.
func indexFirst(b, pat []byte) int {
	off := 0
	for off+len(pat) <= len(b) {
		i := bytes.IndexByte(b[off:len(b)-len(pat)+1], pat[0])
		if i < 0 {
			return -1
		}
		s := off + i
		if bytes.Equal(b[s:s+len(pat)], pat) {
			return s
		}
		off = s + 1
	}
	return -1
}

// markerStart walks back from b[end] over the bytes of b that match the
// end of marker (skipping CRs inside the match). It returns where the
// surviving part of the marker starts, and whether all of it survived.
func markerStart(b []byte, end int, marker string) (start int, whole bool) {
	i, j, good := end, len(marker), end
	for i > 0 && j > 0 {
		c := b[i-1]
		if c == '\r' {
			i--
			continue
		}
		if c != marker[j-1] {
			break
		}
		i--
		j--
		good = i
	}
	return good, j == 0
}

// stripCR returns b without CR bytes (b itself when it has none).
func stripCR(b []byte) []byte {
	if bytes.IndexByte(b, '\r') < 0 {
		return b
	}
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if c != '\r' {
			out = append(out, c)
		}
	}
	return out
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
