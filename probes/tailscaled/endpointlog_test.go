package tailscaled

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/probestest"
)

func TestParseEndpointChanges(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []probes.EndpointChange
		wantErr error
	}{
		{"null", "null\n", []probes.EndpointChange{}, nil},
		{"empty", "[]", []probes.EndpointChange{}, nil},
		{
			name: "as tailscaled writes it (tab-indented)",
			in:   "[\n\t{\n\t\t\"When\": \"2026-11-30T11:58:00.5Z\",\n\t\t\"What\": \"updateFromNode-DERP\",\n\t\t\"From\": \"127.3.3.40:1\",\n\t\t\"To\": \"127.3.3.40:2\"\n\t}\n]\n",
			want: []probes.EndpointChange{{When: time.Date(2026, 11, 30, 11, 58, 0, 5e8, time.UTC), What: "updateFromNode-DERP", From: `"127.3.3.40:1"`, To: `"127.3.3.40:2"`}},
		},
		{"not JSON", "<html>", nil, ErrBadReply},
		{"object, not array", `{"When":"x"}`, nil, ErrBadReply},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseEndpointChanges([]byte(tt.in))
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	long := `[{"What":"x","To":"` + strings.Repeat("é", 200) + `"}]`
	got, err := parseEndpointChanges([]byte(long))
	if err != nil || len(got[0].To) > maxChangeText+len("…") || !utf8.ValidString(string(got[0].To)) {
		t.Errorf("long To = %q (%d bytes), err %v", got[0].To, len(got[0].To), err)
	}
}

func FuzzParseEndpointChanges(f *testing.F) {
	f.Add([]byte(`[{"When":"2026-11-30T12:00:02Z","What":"deleteEndpointLocked-bestAddr-pong-timeout","From":{"ap":"203.0.113.5:41641"}}]`))
	f.Add([]byte("null"))
	f.Add([]byte(`[{"What":"\u001b]0;x\u0007","To":[1,2,{"a":"\u009b31m"}]}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		chs, err := parseEndpointChanges(b)
		if err != nil {
			if !errors.Is(err, ErrBadReply) {
				t.Fatalf("error %v does not wrap ErrBadReply", err)
			}
			return
		}
		for _, c := range chs {
			for _, s := range []string{string(c.What), string(c.From), string(c.To)} {
				if strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }) || !utf8.ValidString(s) {
					t.Fatalf("unsafe text %q", s)
				}
				if len(s) > maxChangeText+len("…") && s != string(c.What) {
					t.Fatalf("From/To not bounded: %d bytes", len(s))
				}
			}
		}
	})
}

func TestEndpointChangesErrors(t *testing.T) {
	ip := netip.MustParseAddr("100.64.0.2")
	if _, err := EndpointChanges(context.Background(), &fakeClient{}, ip); !errors.Is(err, ErrNoEndpointLog) {
		t.Errorf("fake client: err = %v, want ErrNoEndpointLog", err)
	}
	srv := probestest.New(t, loadFixture(t, "direct"))
	srv.SetForbidden("debug-peer-endpoint-changes", true)
	if _, err := EndpointChanges(context.Background(), NewClient(srv.Socket), ip); !errors.Is(err, ErrPermission) {
		t.Errorf("403: err = %v, want ErrPermission", err)
	}
	srv.SetForbidden("debug-peer-endpoint-changes", false)
	chs, err := EndpointChanges(context.Background(), NewClient(srv.Socket), ip)
	if err != nil || len(chs) != 0 {
		t.Errorf("no log: %v, %v", chs, err)
	}
}
