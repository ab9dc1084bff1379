package peers

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"

	"github.com/tailpath/tailpath/devlink"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/boardtest"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/tui/common"
	"github.com/tailpath/tailpath/tui/peers/peerstest"
	"github.com/tailpath/tailpath/tui/tuitest"
)

// Telemetry frames copied from firmware/testdata/scenario.log (the bundled
// firmware's own output): the board is 100.64.0.9 "cores3", has advertised
// 0 endpoints, and later its DISCO probe table fills up.
const (
	frameNet       = "@TP1 N seq=5 up=5400 ip=100.64.0.9 host=cores3 eps=0 derp=1 derpby=lowest-id derpms=182 near=7 nearms=24 *EBF713A9"
	frameDiscoFree = "@TP1 D seq=6 up=5400 pu=0 pcap=64 pdrop=0 preap=0 ping=0 pong=0 cmmi=1 cmmo=1 h2rx=53248 h2wu=0 h2win=12287 *ADC31263"
	frameDiscoFull = "@TP1 D seq=103 up=100400 pu=64 pcap=64 pdrop=10 preap=0 ping=84 pong=20 cmmi=1 cmmo=1 h2rx=65535 h2wu=0 h2win=0 *8B1F1998"
)

// feed is the dashboard's wiring in small: tailscaled snapshots and board
// states through one join.Joiner, each joined snapshot to every pane.
type feed struct {
	joiner join.Joiner
	panes  []common.Pane
}

func (f *feed) snapshot(s probes.Snapshot) {
	ls := f.joiner.SetSnapshot(&s)
	for _, p := range f.panes {
		p.Update(ls)
	}
}

func (f *feed) board(st *devlink.State) {
	if ls, changed := f.joiner.SetDevice(st); changed {
		for _, p := range f.panes {
			p.Update(ls)
		}
	}
}

// rowOf returns the rendered table line of the peer named name (the
// status line, first, is skipped).
func rowOf(t *testing.T, view, name string) string {
	t.Helper()
	for _, line := range strings.Split(view, "\n")[1:] {
		if strings.Contains(line, name) {
			return line
		}
	}
	t.Fatalf("no row for %q in:\n%s", name, view)
	return ""
}

func TestBoardLinksToPeerRow(t *testing.T) {
	tests := []struct {
		name       string
		events     [][]string // frames of each event, in order; nil for none
		snapFirst  bool       // the snapshot arrives before the events
		wantReason probes.ReasonID
		wantAlso   []probes.ReasonID
		wantBoard  string
		wantDetail []string // more lines the detail must show
	}{
		{name: "no board event: no-endpoints", snapFirst: true,
			wantReason: probes.ReasonNoEndpoints},
		{name: "board says 0 endpoints, event after the snapshot", snapFirst: true,
			events:     [][]string{{frameNet}},
			wantReason: probes.ReasonDeviceNoPublicEndpoint, wantAlso: []probes.ReasonID{probes.ReasonNoEndpoints, probes.ReasonFarHomeDERP},
			wantBoard: "nBOARD"},
		{name: "board says 0 endpoints, event before the snapshot",
			events:     [][]string{{frameNet}},
			wantReason: probes.ReasonDeviceNoPublicEndpoint, wantAlso: []probes.ReasonID{probes.ReasonNoEndpoints, probes.ReasonFarHomeDERP},
			wantBoard: "nBOARD"},
		{name: "probe table fills later", snapFirst: true,
			events:     [][]string{{frameNet, frameDiscoFree}, {frameNet, frameDiscoFull}},
			wantReason: probes.ReasonDeviceNoPublicEndpoint,
			wantAlso:   []probes.ReasonID{probes.ReasonNoEndpoints, probes.ReasonDeviceProbeTableFull, probes.ReasonFarHomeDERP},
			wantBoard:  "nBOARD",
			wantDetail: []string{
				"[ ] FAIL    Device.H2Window = 65535 B received, 0 B credit returned, 0 B window open",
				"[ ] FAIL    Device.ProbeTable = 64/64 used, 10 dropped",
			}},
		{name: "board without a net frame is not linked", snapFirst: true,
			events:     [][]string{{frameDiscoFull}},
			wantReason: probes.ReasonNoEndpoints},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewList(common.DefaultStyles())
			l.SetSize(140, 10)
			d := NewDetail(common.DefaultStyles(), peerstest.Now, nil)
			d.SetSize(120, 60)
			snap := relayedSnapshot()
			f := feed{panes: []common.Pane{l, d}}
			if tt.snapFirst {
				f.snapshot(snap)
			}
			for _, frames := range tt.events {
				f.board(boardState(t, frames...))
			}
			if !tt.snapFirst {
				f.snapshot(snap)
			}
			var sel probes.Peer
			for _, id := range l.Shown() {
				if id == "nBOARD" {
					sel = *l.Selected()
				}
			}
			if sel.ID != "nBOARD" {
				t.Fatalf("the board's peer is not the selected first row: %v", l.Shown())
			}
			if sel.Verdict.Reason != tt.wantReason {
				t.Errorf("row reason = %q, want %q", sel.Verdict.Reason, tt.wantReason)
			}
			if diff := cmp.Diff(tt.wantAlso, sel.Verdict.Also); diff != "" {
				t.Errorf("row also (-want +got):\n%s", diff)
			}
			if got := string(l.BoardID()); got != tt.wantBoard {
				t.Errorf("BoardID = %q, want %q", got, tt.wantBoard)
			}
			row := rowOf(t, tuitest.Unstyled(l.View()), "esp32-s3")
			// The reason id, first, whether its words fit or not.
			if wantRow := string(tt.wantReason); !strings.Contains(row, wantRow) {
				t.Errorf("row does not say %q:\n%s", wantRow, row)
			}
			if got, want := strings.Contains(row, ">"+BoardMarker+" esp32-s3 "), tt.wantBoard != ""; got != want {
				t.Errorf("row marked %s = %v, want %v:\n%s", BoardMarker, got, want, row)
			}
			status, _, _ := strings.Cut(tuitest.Unstyled(l.View()), "\n")
			if got, want := strings.Contains(status, BoardMarker+" board: esp32-s3"), tt.wantBoard != ""; got != want {
				t.Errorf("status line names the board = %v, want %v:\n%s", got, want, status)
			}
			if nas := rowOf(t, tuitest.Unstyled(l.View()), "nas"); strings.Contains(nas, BoardMarker) {
				t.Errorf("the direct peer is marked as the board:\n%s", nas)
			}

			d.Update(common.PeerSelectedMsg{Peer: sel})
			v := tuitest.Unstyled(d.View())
			if !strings.Contains(v, "verdict    "+string(tt.wantReason)) {
				t.Errorf("detail verdict is not %s:\n%s", tt.wantReason, v)
			}
			for _, want := range tt.wantDetail {
				if !strings.Contains(v, want) {
					t.Errorf("detail lacks %q:\n%s", want, v)
				}
			}
			if tt.wantBoard != "" {
				for _, want := range []string{
					"esp32-s3 " + BoardMark,
					`[ ] FAIL    Device.Endpoints = 0`,
					`Device.Node = 100.64.0.9 "cores3"`,
					"fix        firmware:",
				} {
					if !strings.Contains(v, want) {
						t.Errorf("detail lacks %q:\n%s", want, v)
					}
				}
			} else if strings.Contains(v, "Device.") {
				t.Errorf("detail of an unlinked peer shows board checks:\n%s", v)
			}
		})
	}
}

// At the narrowest name column the board's name keeps every cell the
// column has (the marker has a column of its own); the filter finds the
// board by "board".
func TestBoardMarkerKeepsName(t *testing.T) {
	l := NewList(common.DefaultStyles())
	l.SetSize(100, 6)
	snap := relayedSnapshot()
	snap.Peers[0].Name = "esp32-s3-cores3-lab"
	f := feed{panes: []common.Pane{l}}
	f.snapshot(snap)
	f.board(boardState(t, frameNet))
	row := rowOf(t, tuitest.Unstyled(l.View()), ">")
	nameCells := l.cols[colName].Width - cellGap - rowPrefix
	if want := ">" + BoardMarker + " " + ansi.Truncate("esp32-s3-cores3-lab", nameCells, "…"); !strings.HasPrefix(row, want) {
		t.Errorf("row does not start %q (the name in all %d cells of its column):\n%s", want, nameCells, row)
	}
	send(l, "/")
	typeInto(l, "board")
	send(l, "enter")
	if diff := cmp.Diff([]string{"nBOARD"}, shownIDs(l)); diff != "" {
		t.Errorf("filter \"board\" (-want +got):\n%s", diff)
	}
}

// TestMicrolinkBoardVerdict is the field report end to end: an ESPHome
// board running microlink, without tailpath telemetry, names itself with
// `VPN IP:` and says its relay is down; its DERP-relayed row in Peers gets
// device-derp-down with the evidence.
func TestMicrolinkBoardVerdict(t *testing.T) {
	st := devlink.NewState()
	for _, s := range []string{
		"[09:00:01][I][microlink:210]: VPN IP: 100.64.0.9",
		"[12:54:01]\x1b[0;33m[W][ml_derp:318]: DERP status: connected=0 fd=-1 rx=74096 tx=245596 loops=1164446\x1b[0m",
	} {
		var l devlink.Line
		devlink.ParseLine([]byte(s+"\n"), &l)
		st.ApplyLine(&l, peerstest.Time, nil)
	}
	var lk join.Joiner
	snap := relayedSnapshot()
	c := st.Clone()
	lk.SetDevice(&c)
	ls := lk.SetSnapshot(&snap)
	if ls.BoardID() != "nBOARD" {
		t.Fatalf("the board was not linked to its peer (linked %q)", ls.BoardID())
	}
	v := ls.Peers[0].Verdict
	if v.Reason != probes.ReasonDeviceDERPDown || v.Summary != "board's DERP relay is down" {
		t.Errorf("verdict %s %q, want device-derp-down", v.Reason, v.Summary)
	}
	found := false
	for _, c := range v.Checks {
		if c.Field == "Device.DERPRelay" && c.Failed && c.Value == "down, was up earlier this boot" {
			found = true
		}
	}
	if !found {
		t.Errorf("no failed Device.DERPRelay check: %+v", v.Checks)
	}
}

// TestReasonCellStartsWithID: the reason column words a verdict one way
// at every width: its id first, then its words where they fit (the words
// alone at one width and the id alone at another read as two states).
func TestReasonCellStartsWithID(t *testing.T) {
	snap := relayedSnapshot()
	for _, w := range []int{80, 100, 120, 160, 200} {
		l := NewList(common.DefaultStyles())
		l.SetSize(w, 10)
		l.Update(peerstest.Joined(snap))
		row := rowOf(t, tuitest.Unstyled(l.View()), "esp32-s3")
		reason := strings.TrimSpace(row[l.colStart(colReason):])
		if !strings.HasPrefix(reason, "no-endpoints") {
			t.Errorf("%d columns: reason %q does not start with its id", w, reason)
		}
		if full := "no-endpoints: peer advertises no UDP endpoints"; reason != full && reason != "no-endpoints" {
			t.Errorf("%d columns: reason %q, want %q or the id alone", w, reason, full)
		}
		nas := rowOf(t, tuitest.Unstyled(l.View()), "nas")
		if got := strings.TrimSpace(nas[l.colStart(colReason):]); got != "direct" {
			t.Errorf("%d columns: the direct peer's reason %q, want direct", w, got)
		}
	}
}

// colStart is the cell where column c starts in a drawn row.
func (l *List) colStart(c int) int {
	n := 0
	for i := 0; i < c; i++ {
		n += l.cols[i].Width
	}
	return n
}

// boardState is boardtest.BoardState at the fixtures' time.
func boardState(t testing.TB, frames ...string) *devlink.State {
	t.Helper()
	return boardtest.BoardState(t, peerstest.Time, frames...)
}

// relayedSnapshot is boardtest.RelayedSnapshot over the fixtures' regions.
func relayedSnapshot() probes.Snapshot {
	return boardtest.RelayedSnapshot(peerstest.Time, peerstest.Regions())
}
