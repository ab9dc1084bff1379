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
	if len(s.pending) > 0 {
		// Finish the held line first, taking bytes from p into pending.
		for len(p) > 0 && len(s.pending) > 0 {
			n, done := s.take(s.pending, p)
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
	for len(p) > 0 {
		n, done := s.take(nil, p)
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

// Flush emits the held unfinished line, if any, marked Partial.
func (s *Splitter) Flush(emit func(*Line)) {
	if len(s.pending) == 0 {
		return
	}
	s.emit(s.pending, true, emit)
	s.pending = s.pending[:0]
}

// take returns how many bytes of p complete the line whose first bytes are
// head (nil at a line start), and whether the line is complete.
func (s *Splitter) take(head, p []byte) (int, bool) {
	start := head
	if len(start) == 0 {
		start = p
	}
	if b := start[0]; b == 0x01 || b == 0x02 {
		// Possible binary frame: needs 3 bytes to know its length.
		if len(head)+len(p) < 3 {
			return len(p), false
		}
		var hdr [3]byte
		k := copy(hdr[:], head)
		copy(hdr[k:], p)
		if n := frameLen(hdr[:]); n > 0 {
			need := n - len(head)
			if need <= 0 {
				return 0, true
			}
			if len(p) < need {
				return len(p), false
			}
			if crc8(head, p[:need]) == 0 {
				return need, true
			}
		}
	}
	i := bytes.IndexByte(p, '\n')
	if i < 0 {
		return len(p), false
	}
	return i + 1, true
}

func (s *Splitter) emit(raw []byte, partial bool, emit func(*Line)) {
	if len(raw) >= 15 && (raw[0] == 0x01 || raw[0] == 0x02) && frameLen(raw) == len(raw) && crc8(raw, nil) == 0 {
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
