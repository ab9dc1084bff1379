package devlink

import "testing"

func TestKeyTranslator(t *testing.T) {
	for _, tc := range []struct {
		enter    byte
		eol, in  string
		want     string
		wantQuit bool
	}{
		{'\r', "\r", "ls\r", "ls\r", false},
		{'\r', "\r\n", "ls\r\x1b[A", "ls\r\n\x1b[A", false},
		{'\n', "\n", "a\nb\n", "a\nb\n", false},
		{'\n', "\r", "a\nb\x1dc", "a\rb", true},
	} {
		out, q := keyTranslator{eol: []byte(tc.eol), enter: tc.enter}.translate(nil, []byte(tc.in))
		if string(out) != tc.want || q != tc.wantQuit {
			t.Errorf("%q: %q %v, want %q %v", tc.in, out, q, tc.want, tc.wantQuit)
		}
	}
	if _, err := EOLBytes("crlf"); err != nil {
		t.Error(err)
	}
	if _, err := EOLBytes("NUL"); err == nil {
		t.Error("--eol NUL accepted")
	}
}
