// Package snapshot saves the evidence of one tailnet diagnosis to a file,
// redacts it for sharing, and diagnoses it again offline with the same
// code as live data. What people paste today (`tailscale status`,
// `tailscale netcheck`, `tailscale ping`, tailscaled log lines) is read
// into the same form by probes/paste, which imports this package. It does
// no terminal I/O and imports no UI.
//
// The API, in the order a caller meets it:
//
//   - Capture(ctx, client, opts) gathers once through a recording client
//     and returns the File and the joined snapshot it diagnosed.
//     NewRecorder + Recorder.File do the same in two steps for callers
//     that gather themselves (`tailpath status`).
//   - Write(w, f) writes f as indented JSON; WriteFile(path, f) writes it
//     atomically (a temporary file renamed into place).
//   - Redact(f) returns a copy safe to share and says what it replaced.
//   - Decode(b) reads one saved document. paste.ReadInput reads a file,
//     stdin or a URL (at most MaxSize bytes) and paste.Parse(inputs) reads
//     saved files (through Decode) and pasted text alike, detected by
//     content.
//   - File.Diagnose(ctx) runs tailscaled.Gather over a LocalClient that answers
//     from the file (Client), then the same linking as the dashboard, and
//     returns the joined snapshot: the same verdicts as when it was taken.
//   - PeerSideOf(f) turns a snapshot saved on a peer into that peer's
//     facts (probes.SourcePeerSnapshot); ApplyPeer merges them.
//
// docs/snapshots.md describes the format, the redaction rules and what
// --from accepts.
package snapshot

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"tailscale.com/ipn/ipnstate"
	"tailscale.com/tailcfg"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/sysctl/tune"
)

// Format and Version identify a snapshot file ("format", "version").
// Readers accept versions up to Version; fields a version lacks are
// unknown, never guessed.
const (
	Format  = "tailpath-snapshot"
	Version = 1
)

// Origins of a File.
const (
	// OriginLocalAPI: captured from a tailscaled's LocalAPI.
	OriginLocalAPI = "localapi"
	// OriginPasted: built from text people paste (tailscale status,
	// netcheck, ping, tailscaled logs).
	OriginPasted = "pasted"
)

// MaxSize bounds what paste.ReadInput reads and paste.Parse accepts (bytes).
const MaxSize = 64 << 20

// File is one saved snapshot: the raw evidence a diagnosis read, and what
// tailpath had carried from earlier observations. Time-dependent facts are
// dated absolutely and judged against Taken.
type File struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Taken is the snapshot's time: when the Status reply that built it
	// returned, or for pasted input the newest time the input states.
	Taken time.Time `json:"taken"`
	// Origin is OriginLocalAPI or OriginPasted.
	Origin string `json:"origin"`
	// TakenFrom says where Taken came from for pasted input ("the newest
	// time the input states", or that it states none).
	TakenFrom string `json:"taken_from,omitempty"`
	// Redacted says what Redact replaced; nil for an unredacted file.
	Redacted *Redaction `json:"redacted,omitempty"`
	// All is true when the capture kept the peers `tailscale status`
	// hides (tailscaled.GatherOptions.All).
	All bool `json:"all,omitempty"`

	// Status is the LocalAPI's /status reply.
	Status *ipnstate.Status `json:"status"`
	// WhoIs holds every /whois reply the diagnosis used, ourselves included.
	WhoIs []WhoIs `json:"whois,omitempty"`
	// DERPMap is the /derpmap reply; DERPMapErr why it is missing.
	DERPMap    *tailcfg.DERPMap `json:"derp_map,omitempty"`
	DERPMapErr string           `json:"derp_map_error,omitempty"`
	// Self are our own facts from pasted input, which a capture reads
	// from WhoIs instead (OriginPasted only).
	Self *SelfFacts `json:"self_facts,omitempty"`
	// PeerSides are peers' own ends of the path, by stable node id, read
	// from their own output in the same paste (a second machine's
	// status, netcheck, version and log: paste_machines.go), with Source
	// probes.SourcePeerSnapshot (OriginPasted only). Diagnose merges
	// each into its peer's PeerSide as ApplyPeer merges a peer's file.
	PeerSides map[safetext.Text]*probes.PeerSide `json:"peer_sides,omitempty"`
	// Netcheck is tailpath's own fresh DERP latency measurement, when the
	// diagnosis had one (dashboard, status --netcheck, a pasted netcheck).
	Netcheck *probes.DERPLatencyReport `json:"netcheck,omitempty"`
	// Host is what tailpath read of the host it ran on (interfaces, the
	// nftables ruleset for tailscaled's port); nil when not read.
	Host *probes.HostFacts `json:"host,omitempty"`
	// Traffic is tailscaled's traffic counters by path as the capture
	// read them (its metrics), with the rates over the poll before; nil
	// when not read (an older file, pasted input).
	Traffic *probes.Traffic `json:"traffic,omitempty"`
	// History is what tailpath carried from earlier polls.
	History History `json:"history"`
	// ControlAPI is the control API's read of the tailnet's devices.
	ControlAPI *ControlAPI `json:"control_api,omitempty"`
	// Board is the linked board's evidence and the peer it is.
	Board *join.Board `json:"board,omitempty"`
	// PathChanges are each peer's observed paths by stable node id.
	PathChanges map[safetext.Text][]join.PathChange `json:"path_changes,omitempty"`
	// Tuning is the host's TCP tuning report (Linux only); TuningErr why
	// it is missing.
	Tuning    *tune.Report `json:"tuning,omitempty"`
	TuningErr string       `json:"tuning_error,omitempty"`
	// Warnings are the diagnosis's non-fatal problems, as it reported them.
	Warnings []safetext.Text `json:"warnings,omitempty"`

	// Inputs lists what pasted input was recognised; Ignored the lines
	// that were not (OriginPasted only).
	Inputs  []Input   `json:"inputs,omitempty"`
	Ignored []Ignored `json:"ignored,omitempty"`
}

// WhoIs is one /whois reply: the node behind Addr, or why there is none.
type WhoIs struct {
	// Addr is the Tailscale IP asked about.
	Addr string `json:"addr"`
	// Node is the reply's node; nil with Err set when the call failed.
	Node *tailcfg.Node `json:"node,omitempty"`
	// Err is the failure's text; Denied marks a permission refusal.
	Err    string `json:"error,omitempty"`
	Denied bool   `json:"denied,omitempty"`
}

// History is what tailscaled.Gather carries from one poll to the next, as it
// stood when the snapshot was taken.
type History struct {
	// DERPLatencyAt and DERPLatencySeen date NetInfo's DERP latencies
	// (probes.Self); zero when unknown.
	DERPLatencyAt   time.Time `json:"derp_latency_at,omitzero"`
	DERPLatencySeen time.Time `json:"derp_latency_seen,omitzero"`
	// Peers by stable node id.
	Peers map[safetext.Text]PeerHistory `json:"peers,omitempty"`
}

// PeerHistory is one peer's carried facts (the probes.Peer fields of the
// same names).
type PeerHistory struct {
	NoHandshakeSince time.Time              `json:"no_handshake_since,omitzero"`
	LastDirect       time.Time              `json:"last_direct,omitzero"`
	LastDirectAddr   netip.AddrPort         `json:"last_direct_addr,omitzero"`
	LastChange       *probes.EndpointChange `json:"last_change,omitempty"`
	PingRun          *probes.PingRun        `json:"ping_run,omitempty"`
	// Latency is the last ping's round trip, nanoseconds.
	Latency    time.Duration `json:"latency_ns,omitempty"`
	TxRate     float64       `json:"tx_rate,omitempty"`
	RxRate     float64       `json:"rx_rate,omitempty"`
	RatesKnown bool          `json:"rates_known,omitempty"`
	// HandshakeUnknown: the source shows no handshakes (pasted status text).
	HandshakeUnknown bool `json:"handshake_unknown,omitempty"`
	// Offline: pasted status text says the peer is offline, perhaps with
	// no "last seen" time (the CLI printed none before 1.90), so
	// PeerStatus.LastSeen cannot carry it.
	Offline bool `json:"offline,omitempty"`
	// LastSeenAgo is pasted status text's "last seen 3d ago": the peer's
	// LastSeen was computed from it (probes.Peer.LastSeenAgo).
	LastSeenAgo time.Duration `json:"last_seen_ago_ns,omitempty"`
	// PathText is the path column in the pasted text's own words where
	// tailscale status's cannot be rebuilt: a peer only ping output names
	// ("ping: via DERP(nyc)"), a relay region the poster redacted.
	PathText string `json:"path_text,omitempty"`
	// PathUnknown: the paste names no path for the peer (only TSMP or
	// ICMP pings, whose pongs name the ping type): its path kind is
	// probes.PathUnknown.
	PathUnknown bool `json:"path_unknown,omitempty"`
	// WireGuard and WireGuardSince are the peer's WireGuard session state
	// as the IPN bus reported it ("" when it was not reported).
	WireGuard      string    `json:"wireguard,omitempty"`
	WireGuardSince time.Time `json:"wireguard_since,omitzero"`
	// ICMPReply is whether a pasted `tailscale ping --icmp` was answered
	// (probes.Peer.ICMPReply); nil when none was pasted.
	ICMPReply *bool `json:"icmp_reply,omitempty"`
}

func (h PeerHistory) empty() bool {
	return h.NoHandshakeSince.IsZero() && h.LastDirect.IsZero() && h.LastChange == nil &&
		h.PingRun == nil && h.Latency == 0 && h.TxRate == 0 && h.RxRate == 0 && !h.RatesKnown && !h.HandshakeUnknown &&
		!h.Offline && h.PathText == "" && h.WireGuard == "" && h.WireGuardSince.IsZero() && h.ICMPReply == nil
}

// ControlAPI is the control API's answer as the diagnosis used it.
type ControlAPI struct {
	Status probes.APIStatus `json:"status"`
	// Facts are the devices' facts; nil when the read failed or was late.
	Facts *probes.APIFacts `json:"facts,omitempty"`
}

// Input is one recognised piece of pasted input.
type Input struct {
	// Name is the file it came from ("-" for stdin).
	Name string `json:"name"`
	// Kind is what it is: "tailscale status --json", "tailscale netcheck", …
	Kind string `json:"kind"`
	// Lines is the 1-based line range it spans in Name.
	First int `json:"first_line"`
	Last  int `json:"last_line"`
	// Note says what it contributed ("5 peers", "our NAT facts").
	Note string `json:"note,omitempty"`
}

// Ignored is a line of pasted input that no parser recognised.
type Ignored struct {
	Name string `json:"name"`
	Line int    `json:"line"`
	// Text is the line, sanitised and cut to 120 bytes; empty in a
	// redacted file.
	Text string `json:"text,omitempty"`
}

// Errors Decode, paste.ReadInput and paste.Parse return, testable with
// errors.Is.
var (
	// ErrNotSnapshot: the input is neither a snapshot nor anything the
	// paste detector recognises.
	ErrNotSnapshot = errors.New("not a tailpath snapshot or recognised tailscale output")
	// ErrVersion: the file is from a newer tailpath.
	ErrVersion = errors.New("unsupported snapshot version")
	// ErrCorrupt: the file claims to be a snapshot but does not decode.
	ErrCorrupt = errors.New("corrupt snapshot")
	// ErrTooLarge: the input exceeds MaxSize.
	ErrTooLarge = errors.New("input too large")
)

// Write writes f as indented JSON with a final newline.
func Write(w io.Writer, f *File) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(f)
}

// WriteFile writes f to path atomically: into a temporary file in the same
// directory, synced, then renamed over path, so a reader never sees half a
// snapshot and a failed write leaves any earlier file in place. The file
// is created 0600: unredacted snapshots hold the tailnet's addresses.
func WriteFile(path string, f *File) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		// Name the file asked for, not the temporary one beside it.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("snapshot: cannot write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o600); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return fmt.Errorf("snapshot: %w", err)
	}
	if err := Write(tmp, f); err != nil {
		return fmt.Errorf("snapshot: writing %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("snapshot: writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("snapshot: writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		var le *os.LinkError
		if errors.As(err, &le) {
			err = le.Err
		}
		return fmt.Errorf("snapshot: cannot write %s: %w", path, err)
	}
	return nil
}

// Decode reads one snapshot document: every string in it sanitised and
// every list within bounds (sanitizeJSON, capLists), each cut reported
// among its warnings.
func Decode(b []byte) (*File, error) {
	b, cuts := sanitizeJSON(b)
	var head struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
	}
	if err := json.Unmarshal(b, &head); err != nil || head.Format != Format {
		return nil, ErrNotSnapshot
	}
	if head.Version < 1 || head.Version > Version {
		return nil, fmt.Errorf("%w %d: this tailpath reads versions 1 to %d; use a newer tailpath", ErrVersion, head.Version, Version)
	}
	var f File
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrCorrupt, safetext.Clean(err.Error()))
	}
	if f.Status == nil {
		return nil, fmt.Errorf("%w: no \"status\"", ErrCorrupt)
	}
	f.clean()
	f.capLists()
	for _, n := range cuts {
		f.Warnings = append(f.Warnings, safetext.New(fmt.Sprintf("a list in this snapshot holds %d entries; only the first %d are read", n, maxElems)))
	}
	return &f, nil
}

// clean sanitises the strings of f that are shown without passing through
// tailscaled.Gather (which sanitises what it reads from Status and WhoIs).
func (f *File) clean() {
	if f.Board != nil {
		f.Board.Evidence.Hostname = safetext.Clean(f.Board.Evidence.Hostname)
		f.Board.Evidence.HomeDERPBy = safetext.Clean(f.Board.Evidence.HomeDERPBy)
	}
	for id, chs := range f.PathChanges {
		for i := range chs {
			chs[i].Text = join.PathText(&probes.Path{Kind: chs[i].Kind, Text: chs[i].Text})
		}
		f.PathChanges[id] = chs
	}
	if h := f.Host; h != nil && h.Firewall != nil {
		h.Firewall.Verdict = safetext.Clean(h.Firewall.Verdict)
	}
	for id, h := range f.History.Peers {
		h.WireGuard = safetext.Clean(h.WireGuard)
		f.History.Peers[id] = h
	}
	for i := range f.Inputs {
		in := &f.Inputs[i]
		in.Name, in.Kind, in.Note = safetext.Clean(in.Name), safetext.Clean(in.Kind), safetext.Clean(in.Note)
	}
	for i := range f.Ignored {
		f.Ignored[i].Name, f.Ignored[i].Text = safetext.Clean(f.Ignored[i].Name), safetext.Clean(f.Ignored[i].Text)
	}
	f.DERPMapErr = safetext.Clean(f.DERPMapErr)
	f.TuningErr = safetext.Clean(f.TuningErr)
}

// SelfFacts are our own facts from pasted input (a netcheck report, the
// daemon's log), which a capture reads from the LocalAPI instead. File
// .Diagnose fills what the status left unknown with them.
type SelfFacts struct {
	// Version is this node's Tailscale version, as `tailscale version`
	// or tailscaled's "Program starting" line said it; "" unknown.
	Version   safetext.Text    `json:"version,omitempty"`
	NAT       *probes.NATInfo  `json:"nat,omitempty"`
	HomeDERP  int              `json:"home_derp,omitempty"`
	Endpoints []netip.AddrPort `json:"endpoints,omitempty"`
	// EndpointTypes are the endpoints' types as the daemon logged them
	// ("stun", "local", "portmap", "stun4localport"), in the same order.
	EndpointTypes []string `json:"endpoint_types,omitempty"`
	// Evidence is our own trouble the input shows (probes.SelfEvidence).
	Evidence *probes.SelfEvidence `json:"evidence,omitempty"`
	// Daemon is how tailscaled runs here, as the input shows it
	// (probes.Daemon); Prose the facts read from the poster's words.
	Daemon *probes.Daemon `json:"daemon,omitempty"`
	Prose  []string       `json:"prose,omitempty"`
}
