package devlink

import "bytes"

// maxLine bounds one line: a longer run without "\n" is emitted in pieces
// (marked Partial) so a board printing garbage cannot grow memory without limit.
const maxLine = 64 << 10

// Splitter cuts a console byte stream into lines and parses each one. Feed it
// bytes as they arrive; it calls emit once per complete line, in order. Bytes
// of an unfinished line are kept until more arrive or Flush is called (after
// an idle gap, on link down, at end of input), so no byte read is lost.
//
// ESP-IDF Log V2 binary frames (a 0x01/0x02 byte at the start of a line, a
// length and a CRC-8; see esp_log's binary mode) are recognised and emitted as
// one KindBinary line each instead of being cut at their 0x0a bytes.
//
// The ESP-IDF console's terminal status query (StatusQuery, ESC[5n) at
// the start of a line is emitted at once as a KindStatusQuery line of its
// own (Raw is the 4 bytes, Partial set), without waiting for the line's
// end: the console waits for the answer before it prints more.
//
// The *Line passed to emit is reused: copy what you keep (Line.Clone). A
// Splitter is not safe for concurrent use. The zero value is ready.
type Splitter struct {
	pending []byte
	line    Line
}

// Pending reports how many bytes of an unfinished line are held.
func (s *Splitter) Pending() int { return len(s.pending) }

// Feed consumes p (which it does not keep) and emits every line it completes.
func (s *Splitter) Feed(p []byte, emit func(*Line)) {
	if n := len(s.pending); n > 0 && isQueryPrefix(s.pending) && len(p) > 0 {
		// The held bytes may start a status query: look at the few
		// bytes of p that decide it (without copying p).
		k := min(len(StatusQuery)-n, len(p))
		var head [4]byte
		copy(head[:], s.pending)
		copy(head[n:], p[:k])
		switch h := head[:n+k]; {
		case string(h) == StatusQuery:
			s.pending = s.pending[:0]
			s.emitQuery(emit)
			s.feed(p[k:], false, emit)
			return
		case isQueryPrefix(h):
			s.pending = append(s.pending, p...)
			return
		}
		// Not a query: the held bytes start an ordinary line.
	}
	if len(s.pending) > 0 {
		// Finish the held line first, taking bytes from p into pending.
		for len(p) > 0 && len(s.pending) > 0 {
			n, done, resplit := s.take(s.pending, p, false)
			if resplit {
				// The held bytes looked like the start of a binary frame but
				// are not one, and already hold a line end: split them again
				// as text (rare, so the copy is fine).
				buf := append(append([]byte(nil), s.pending...), p...)
				s.pending = s.pending[:0]
				s.feed(buf, true, emit)
				return
			}
			s.pending = append(s.pending, p[:n]...)
			p = p[n:]
			if !done {
				if len(s.pending) >= maxLine {
					s.emit(s.pending, true, emit)
					s.pending = s.pending[:0]
				}
				return
			}
			s.emit(s.pending, false, emit)
			s.pending = s.pending[:0]
		}
	}
	s.feed(p, false, emit)
}

// feed splits p from a line start; textFirst skips the binary frame check
// for the first line.
func (s *Splitter) feed(p []byte, textFirst bool, emit func(*Line)) {
	for len(p) > 0 {
		if p[0] == 0x1b {
			if len(p) >= len(StatusQuery) && string(p[:len(StatusQuery)]) == StatusQuery {
				s.emitQuery(emit)
				p = p[len(StatusQuery):]
				continue
			}
			if len(p) < len(StatusQuery) && isQueryPrefix(p) {
				s.pending = append(s.pending, p...)
				return
			}
		}
		n, done, _ := s.take(nil, p, textFirst)
		textFirst = false
		if !done {
			if n >= maxLine {
				s.emit(p[:n], true, emit)
				p = p[n:]
				continue
			}
			s.pending = append(s.pending, p...)
			return
		}
		s.emit(p[:n], false, emit)
		p = p[n:]
	}
}

// Flush emits the held unfinished line, if any, marked Partial. Bytes held
// as a possible binary frame that never completed are split as text.
func (s *Splitter) Flush(emit func(*Line)) {
	for len(s.pending) > 0 {
		p := s.pending
		if (p[0] == 0x01 || p[0] == 0x02) && bytes.IndexByte(p, '\n') >= 0 && !isFrame(p) {
			buf := append([]byte(nil), p...)
			s.pending = s.pending[:0]
			s.feed(buf, true, emit)
			continue
		}
		s.emit(p, true, emit)
		s.pending = s.pending[:0]
	}
}

// statusQuery is the Raw and Text of every KindStatusQuery line; never
// modified.
var statusQuery = []byte(StatusQuery)

// emitQuery emits the console's status query as a line of its own.
func (s *Splitter) emitQuery(emit func(*Line)) {
	q := statusQuery[:len(statusQuery):len(statusQuery)]
	s.line = Line{Raw: q, Text: q, Kind: KindStatusQuery, Partial: true}
	emit(&s.line)
}

// isQueryPrefix reports whether b is a proper prefix of StatusQuery.
func isQueryPrefix(b []byte) bool {
	return len(b) < len(StatusQuery) && StatusQuery[:len(b)] == string(b)
}

// isFrame reports whether b is exactly one valid Log V2 binary frame.
func isFrame(b []byte) bool {
	return len(b) >= 15 && (b[0] == 0x01 || b[0] == 0x02) && frameLen(b) == len(b) && crc8(b, nil) == 0
}

// take returns how many bytes of p complete the line whose first bytes are
// head (nil at a line start), and whether the line is complete. resplit is
// true when head turned out not to be a binary frame although it already
// holds a "\n" (the caller must split head again). text skips the frame check.
func (s *Splitter) take(head, p []byte, text bool) (n int, done, resplit bool) {
	start := head
	if len(start) == 0 {
		start = p
	}
	if b := start[0]; !text && (b == 0x01 || b == 0x02) {
		// Possible binary frame: needs 3 bytes to know its length.
		if len(head)+len(p) < 3 {
			return len(p), false, false
		}
		var hdr [3]byte
		k := copy(hdr[:], head)
		copy(hdr[k:], p)
		if fl := frameLen(hdr[:]); fl > 0 {
			need := fl - len(head)
			if need <= 0 {
				return 0, true, false
			}
			if len(p) < need {
				return len(p), false, false
			}
			if crc8(head, p[:need]) == 0 {
				return need, true, false
			}
		}
		if bytes.IndexByte(head, '\n') >= 0 {
			return 0, false, true
		}
	}
	i := bytes.IndexByte(p, '\n')
	if i < 0 {
		return len(p), false, false
	}
	return i + 1, true, false
}

func (s *Splitter) emit(raw []byte, partial bool, emit func(*Line)) {
	if isFrame(raw) {
		s.line = Line{Raw: raw, Text: raw, Kind: KindBinary}
	} else {
		ParseLine(raw, &s.line)
		s.line.Partial = partial
	}
	emit(&s.line)
}

// frameLen returns a plausible Log V2 binary frame's total length from its
// first three bytes (type, then a big-endian control word whose low 10 bits
// are the length), or 0.
func frameLen(b []byte) int {
	n := int(b[1])<<8 | int(b[2])
	n &= 0x3ff
	if n < 15 {
		return 0
	}
	return n
}

// crc8 is the Log V2 frame check (polynomial 0x07, initial 0) over a then b;
// a whole frame including its trailing CRC byte checks to 0.
func crc8(a, b []byte) byte {
	var c byte
	for _, p := range [2][]byte{a, b} {
		for _, x := range p {
			c ^= x
			for range 8 {
				if c&0x80 != 0 {
					c = c<<1 ^ 0x07
				} else {
					c <<= 1
				}
			}
		}
	}
	return c
}
