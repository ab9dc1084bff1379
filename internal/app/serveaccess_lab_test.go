package app

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tailpath/tailpath/internal/labtest"
	"github.com/tailpath/tailpath/probes/lab"
	"github.com/tailpath/tailpath/probes/snapshot"
)

// TestServeTailnetCallers runs serve on the lab's observer, listening on
// its tailnet address, and reads it from two other lab nodes, each its
// own user (testcontrol gives every node one): with --allow naming
// lab-direct's login, lab-direct reads /metrics and /snapshot.json and
// lab-idle gets 403; with the default (self) both get 403; a request
// naming another Host gets 421 whoever sends it.
func TestServeTailnetCallers(t *testing.T) {
	l := startTestLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var directIP, idleIP string
	for _, p := range l.Peers() {
		switch p.Name {
		case lab.DirectName:
			directIP = p.TailscaleIP.String()
		case lab.IdleName:
			idleIP = p.TailscaleIP.String()
		}
	}
	who, err := l.Observer().WhoIs(ctx, directIP)
	if err != nil {
		t.Fatal(err)
	}
	directLogin := who.UserProfile.LoginName
	if who2, err := l.Observer().WhoIs(ctx, idleIP); err != nil || who2.UserProfile.LoginName == directLogin {
		t.Fatalf("lab-idle's owner %v (%v) is lab-direct's %s: the test needs two users", who2, err, directLogin)
	}
	direct, err := labtest.HTTPClient(l, lab.DirectName)
	if err != nil {
		t.Fatal(err)
	}
	idle, err := labtest.HTTPClient(l, lab.IdleName)
	if err != nil {
		t.Fatal(err)
	}

	serve := func(port int, allow []string) string {
		ln, err := labtest.Listen(l, "tcp", fmt.Sprintf(":%d", port))
		if err != nil {
			t.Fatal(err)
		}
		s := &Serve{Sources: Sources{Client: l.Observer(), Interval: time.Second}, MaxPeers: 100}
		if allow != nil {
			s.Access = &Access{Allow: allow}
		}
		s.Snapshot = s.SnapshotFile
		sctx, stop := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.Run(sctx, ln) }()
		t.Cleanup(func() {
			stop()
			if err := <-done; err != nil {
				t.Errorf("serve on :%d: %v", port, err)
			}
		})
		return fmt.Sprintf("http://%s:%d", l.ObserverIP(), port)
	}
	get := func(c *http.Client, url, host string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if host != "" {
			req.Host = host
		}
		res, err := c.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}

	allowDirect := serve(9473, []string{directLogin})
	selfOnly := serve(9474, nil)
	for _, tt := range []struct {
		from     string
		c        *http.Client
		url      string
		host     string
		want     int
		says     string
		snapshot bool
	}{
		{"lab-direct, allowed by login", direct, allowDirect + "/metrics", "", 200, "tailpath_peer_path", false},
		{"lab-direct, allowed by login", direct, allowDirect + "/snapshot.json", "", 200, snapshot.Format, true},
		{"lab-idle, not allowed", idle, allowDirect + "/metrics", "", 403, "may not read this server", false},
		{"lab-idle, not allowed", idle, allowDirect + "/snapshot.json", "", 403, "may not read", false},
		{"lab-direct, default self", direct, selfOnly + "/metrics", "", 403, "may not read this server", false},
		{"lab-idle, default self", idle, selfOnly + "/healthz", "", 403, "may not read", false},
		{"lab-direct, foreign Host", direct, allowDirect + "/metrics", "rebind.attacker.example:9473", 421, "is not this server", false},
		{"lab-direct, MagicDNS name", direct, allowDirect + "/healthz", lab.ObserverName + "." + lab.MagicDNSDomain + ":9473", 200, "", false},
	} {
		var code int
		var body string
		// The MagicDNS name is known once serve has polled, and so are
		// the peers' paths /metrics reports: until then, 503, 421 or a
		// 200 without them is asked again.
		for deadline := time.Now().Add(time.Minute); ; {
			code, body = get(tt.c, tt.url, tt.host)
			settled := code == tt.want && strings.Contains(body, tt.says)
			if settled || time.Now().After(deadline) || (code != 503 && code != 421 && code != tt.want) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if code != tt.want || !strings.Contains(body, tt.says) {
			t.Errorf("%s: GET %s (Host %q) = %d %.300q; want %d saying %q", tt.from, tt.url, tt.host, code, body, tt.want, tt.says)
		}
		if tt.snapshot && strings.Contains(body, "nodekey:") {
			f, err := snapshot.Decode([]byte(body))
			if err != nil {
				t.Fatalf("the served snapshot does not read: %v", err)
			}
			for k := range f.Status.Peer {
				if st, _ := l.PeerStatus(ctx, f.Status.Peer[k].HostName); st != nil && st.PublicKey == k {
					t.Errorf("%s's node key %s is served", st.HostName, k.ShortString())
				}
			}
		}
	}
}
