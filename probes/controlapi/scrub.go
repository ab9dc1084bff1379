package controlapi

import (
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// scrubGram is the shortest piece of a secret's encoding that scrubbing
// finds on its own: 8 characters of the key (or 4 of its bytes in hex, 6
// in base64) are more of it than chance puts in a message, and a piece
// that long is all a reader could take from it.
const scrubGram = 8

// secretScrubber finds a secret in text in every form an echo gives it,
// whole or in pieces: as it is in any case (with or without its tskey-
// prefix, in upper case, cut by "…" or a line break), in hex of either
// case (of it, or of a line holding it), and in base64, standard or
// URL-safe, padded or not, of it or of any line holding it (HTTP basic
// auth's "key:", "id:secret", a whole header line, also a line holding
// its base64: "Authorization: Basic …" encoded whole): inside a longer
// line a secret's base64 is one of three strings, by where it starts
// against the line's 3-byte groups. Each form is held as its
// scrubGram-long pieces, lower-cased (hex has no case, and a base64
// piece of 8 characters stands for 48 bits: lower-casing loses none
// that matter); a run of text made of pieces is replaced.
type secretScrubber struct {
	grams map[string]bool
	whole []string // secrets shorter than scrubGram: replaced whole
}

// newSecretScrubber returns a scrubber for secrets ("" ignored).
func newSecretScrubber(secrets ...string) *secretScrubber {
	sc := &secretScrubber{grams: map[string]bool{}}
	for _, s := range secrets {
		if s == "" {
			continue
		}
		if len(s) < scrubGram {
			sc.whole = append(sc.whole, s)
			continue
		}
		sc.add(s)
		sc.add(hex.EncodeToString([]byte(s)))
		// Base64 of a line holding it, and of a line holding that (a
		// header line with basic auth's base64, encoded whole).
		for _, inner := range base64Forms(s) {
			sc.add(inner)
			for _, outer := range base64Forms(inner) {
				sc.add(outer)
			}
		}
	}
	return sc
}

// base64Forms are s's base64 inside any longer text, in both alphabets:
// one string per place s may start in a group of three bytes.
func base64Forms(s string) []string {
	var out []string
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for lead := range 3 {
			if f := aligned(enc, s, lead); len(f) >= scrubGram {
				out = append(out, f)
			}
		}
	}
	return out
}

// aligned is s's base64 in enc when lead bytes come before it in its
// group of three: the characters that depend on s alone.
func aligned(enc *base64.Encoding, s string, lead int) string {
	e := enc.EncodeToString(append(make([]byte, lead), s...))
	from := (8*lead + 5) / 6 // characters holding a bit of the lead bytes
	to := len(e)
	if (lead+len(s))%3 != 0 {
		to-- // the last character holds bits of what follows
	}
	if from >= to {
		return ""
	}
	return e[from:to]
}

// add holds every scrubGram-long piece of form.
func (sc *secretScrubber) add(form string) {
	form = asciiLower(form)
	for i := 0; i+scrubGram <= len(form); i++ {
		sc.grams[form[i:i+scrubGram]] = true
	}
}

// asciiLower lower-cases ASCII letters only, so that byte offsets stay.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// scrub replaces every run of s made of pieces of a secret's forms with
// "[redacted]", and a short secret wherever it is.
func (sc *secretScrubber) scrub(s string) string {
	for _, w := range sc.whole {
		s = strings.ReplaceAll(s, w, "[redacted]")
	}
	if len(sc.grams) == 0 || len(s) < scrubGram {
		return s
	}
	low := asciiLower(s)
	var b strings.Builder
	last, end := 0, -1 // end: where the run being marked ends
	start := 0
	for i := 0; i+scrubGram <= len(low); i++ {
		if !sc.grams[low[i:i+scrubGram]] {
			continue
		}
		if i > end {
			if end >= 0 {
				b.WriteString(s[last:start])
				b.WriteString("[redacted]")
				last = end
			}
			start = i
		}
		end = i + scrubGram
	}
	if end < 0 {
		return s
	}
	b.WriteString(s[last:start])
	b.WriteString("[redacted]")
	b.WriteString(s[end:])
	return b.String()
}
