package metrics

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/probes/probestest"
)

// manyPeers is fixedSnapshot with n peers: 40% direct, 25% DERP-relayed
// with reasons, 10% peer relay, 20% idle, 5% offline; every tenth peer
// has changed its path when shift is true.
func manyPeers(n int, at time.Time, shift bool) *probes.Snapshot {
	s := fixedSnapshot(at)
	s.Peers = make([]probes.Peer, n)
	reasons := []probes.ReasonID{probes.ReasonNoEndpoints, probes.ReasonLocalHardNAT, probes.ReasonFarHomeDERP, probes.ReasonDiscoUnanswered, probes.ReasonUnexplained}
	for i := range s.Peers {
		p := &s.Peers[i]
		p.ID = safetext.New(fmt.Sprintf("n%06dCNTRL", i))
		p.Name = safetext.New(fmt.Sprintf("node-%04d", i))
		p.TailscaleIPs = []netip.Addr{netip.AddrFrom4([4]byte{100, 64, byte(i >> 8), byte(i)})}
		k := i % 20
		if shift && i%10 == 0 {
			k = (k + 9) % 20
		}
		switch {
		case k < 8:
			p.Path = probes.Path{Kind: probes.PathDirect, Addr: netip.AddrPortFrom(netip.AddrFrom4([4]byte{203, 0, 113, byte(i)}), 41641)}
			p.Verdict.Reason = probes.ReasonDirect
			p.Latency = time.Duration(i%50+1) * time.Millisecond
		case k < 13:
			p.Path = probes.Path{Kind: probes.PathDERP, DERPCode: "fra"}
			p.Verdict.Reason = reasons[i%len(reasons)]
			p.Latency = time.Duration(i%90+30) * time.Millisecond
		case k < 15:
			p.Path = probes.Path{Kind: probes.PathPeerRelay, PeerRelay: "100.64.9.9:7777:vni:3"}
			p.Verdict.Reason = probes.ReasonPeerRelay
		case k < 19:
			p.Path = probes.Path{Kind: probes.PathIdle}
			p.Verdict.Reason = probes.ReasonIdle
		default:
			p.Path = probes.Path{Kind: probes.PathOffline}
			p.Verdict.Reason = probes.ReasonOffline
		}
		if k < 15 {
			p.Active, p.LastHandshake = true, at.Add(-time.Duration(i%120)*time.Second)
			p.TxBytes, p.RxBytes = int64(i)*7919, int64(i)*104729
		}
	}
	return s
}

// discardWriter is an http.ResponseWriter that counts and drops the
// body, as a connection's buffered writer costs nothing per scrape.
type discardWriter struct {
	header http.Header
	code   int
	n      int
}

func (w *discardWriter) Header() http.Header { return w.header }
func (w *discardWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}
func (w *discardWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.n += len(p)
	return len(p), nil
}

// BenchmarkScrape is one scrape of /metrics as tailpath serve answers it
// (the runtime registry included) for a 1,000-peer tailnet with a board
// and tuning: the text format, and OpenMetrics gzipped as Prometheus asks.
// Each op first stores the next snapshot (a tenth of the peers' paths
// alternate), as a 2 s poll between 15 s scrapes does.
func BenchmarkScrape(b *testing.B) {
	for _, tc := range []struct{ name, accept, encoding string }{
		{"text", "text/plain", ""},
		{"openmetrics-gzip", "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1", "gzip"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var st Store
			st.ExpectBoard()
			st.ExpectTuning()
			var l join.Joiner
			snaps := [2]*join.Snapshot{}
			for i := range snaps {
				snaps[i] = l.SetSnapshot(manyPeers(1000, t0.Add(time.Duration(i)*2*time.Second), i == 1))
			}
			st.SetSource(probes.SourceStatus{Up: true})
			setBoard(&st, fixedBoard(t0))
			st.SetTuning(fixedTuning(), nil)
			reg := NewRuntimeRegistry()
			h := Handler(NewGatherer(&st, Options{Extra: reg}), reg)
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			req.Header.Set("Accept", tc.accept)
			if tc.encoding != "" {
				req.Header.Set("Accept-Encoding", tc.encoding)
			}
			var size int
			b.ReportAllocs()
			cpu0 := probestest.CPUTime()
			for i := 0; b.Loop(); i++ {
				st.SetSnapshot(snaps[i%2])
				w := &discardWriter{header: http.Header{}}
				h.ServeHTTP(w, req)
				if w.code != http.StatusOK {
					b.Fatalf("status %d", w.code)
				}
				size = w.n
			}
			b.ReportMetric(float64(size), "body-bytes")
			// CPU time (this process, GC included) says more than wall time
			// on a shared machine.
			b.ReportMetric(float64(probestest.CPUTime()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}
