package safetext

import "fmt"

// Text is outside text that has been through Clean: a peer's or board's
// name, an OS string, a DERP region code, a ping's path, an error from a
// daemon or a port. The type marks it clean, so a renderer writes it as it
// is and never cleans it again.
//
// A Text is made only where outside text enters tailpath: by New, Format
// or Of, or by decoding (UnmarshalText cleans, so a snapshot file or a
// JSON reply decodes to clean Text). Converting a string variable with
// Text(s) skips the cleaning; a test (TestTextMadeOnlyByCleaning) fails on
// any such conversion outside this package. A constant may be converted:
// our own words are clean.
type Text string

// New cleans s (Clean) and marks it clean.
func New(s string) Text { return Text(Clean(s)) }

// Format is New(fmt.Sprintf(format, a...)): a message built from outside
// values, cleaned once as a whole.
func Format(format string, a ...any) Text { return New(fmt.Sprintf(format, a...)) }

// Of is err's message, cleaned; "" for a nil error. Errors carry outside
// text (a daemon's reply, a port's name, a file's bytes), so a message
// meant for a screen crosses into one as Text.
func Of(err error) Text {
	if err == nil {
		return ""
	}
	return New(err.Error())
}

// All cleans each of ss.
func All(ss []string) []Text {
	if ss == nil {
		return nil
	}
	out := make([]Text, len(ss))
	for i, s := range ss {
		out[i] = New(s)
	}
	return out
}

// String returns t as a plain string.
func (t Text) String() string { return string(t) }

// Cut is Cut(t, n) on clean text: cutting on a rune boundary and adding
// "…" keeps it clean.
func (t Text) Cut(n int) Text { return Text(Cut(string(t), n)) }

// UnmarshalText cleans what it decodes, so JSON (a snapshot file, a
// LocalAPI or control-API reply) decodes into Text already clean.
func (t *Text) UnmarshalText(b []byte) error {
	*t = New(string(b))
	return nil
}

// Strings is ts as plain strings (for strings.Join and friends).
func Strings(ts []Text) []string {
	if ts == nil {
		return nil
	}
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = string(t)
	}
	return out
}
