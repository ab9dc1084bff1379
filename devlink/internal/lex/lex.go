// Package lex holds the byte-level scanners devlink's line parsers and
// devlink/crash's report parsers share: hex and decimal digit runs, and
// a short, valid-UTF-8 quote of a field for an error or a note.
package lex

import "bytes"

// IsHex reports whether c is a hex digit.
func IsHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// HexPrefix parses leading hex digits (at most 16): their value and how
// many there were.
func HexPrefix(b []byte) (uint64, int) {
	var v uint64
	n := 0
	for n < len(b) && n < 16 && IsHex(b[n]) {
		c := b[n]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		v = v<<4 | uint64(c)
		n++
	}
	return v, n
}

// DecPrefix is how many leading decimal digits b has (at most 9).
func DecPrefix(b []byte) int {
	n := 0
	for n < len(b) && n < 9 && b[n] >= '0' && b[n] <= '9' {
		n++
	}
	return n
}

// Quote is b cut to 40 bytes with invalid UTF-8 replaced.
func Quote(b []byte) string {
	if len(b) > 40 {
		b = b[:40]
	}
	return string(bytes.ToValidUTF8(b, []byte("\uFFFD")))
}
