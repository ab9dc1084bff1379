package paste

import (
	"encoding/json"
	"fmt"
	"strings"

	"tailscale.com/client/tailscale/apitype"
	"tailscale.com/ipn/ipnstate"
	"tailscale.com/tailcfg"
	"tailscale.com/types/key"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes/snapshot"
)

// JSON documents beside the status and netcheck ones paste.go reads:
// `tailscale whois --json` (a node as WhoIs answers: its endpoints and
// home DERP, as the live path asks for each peer), one peer or our own
// entry cut from `tailscale status --json`, `tailscale debug prefs`, a
// DERP map and `tailscale debug derp`.

// Kinds of input.
const (
	KindWhoIs          = "tailscale whois --json"
	KindStatusFragment = "tailscale status --json (part)"
)

// moreJSON reads a JSON object paste.go's readJSON does not know, by its
// keys; ok false when it is none of them.
func (p *paste) moreJSON(raw []byte, keys map[string]json.RawMessage) (kind, note string, ok bool) {
	switch {
	case keys["Node"] != nil && (keys["UserProfile"] != nil || keys["CapMap"] != nil):
		return p.whoisJSON(raw)
	case keys["ControlURL"] != nil && (keys["RouteAll"] != nil || keys["WantRunning"] != nil):
		note, ok = p.prefsJSON(raw)
		return KindPrefs, note, ok
	case keys["Regions"] != nil:
		note, ok = p.derpMapJSON(raw, "the input's DERP map")
		return KindDERPMap, note, ok
	case keys["Info"] != nil && (keys["Errors"] != nil || keys["Warnings"] != nil):
		note, ok = p.debugDERP(raw)
		return KindDebugDERP, note, ok
	case keys["TailscaleIPs"] != nil && (keys["HostName"] != nil || keys["DNSName"] != nil),
		// A peer entry trimmed by hand or by jq (`{ID, HostName, Relay,
		// CurAddr}`): ipnstate.PeerStatus's own path fields name it.
		keys["ID"] != nil && keys["HostName"] != nil && (keys["Relay"] != nil || keys["CurAddr"] != nil || keys["PeerRelay"] != nil || keys["PublicKey"] != nil):
		return p.statusFragment(raw, false)
	}
	return "", "", false
}

// whoisJSON reads `tailscale whois --json` (apitype.WhoIsResponse): the
// node's reply, kept as the WhoIs the live path makes of its address.
func (p *paste) whoisJSON(raw []byte) (kind, note string, ok bool) {
	var w apitype.WhoIsResponse
	if json.Unmarshal(raw, &w) != nil || w.Node == nil || len(w.Node.Addresses) == 0 {
		return "", "", false
	}
	t := &p.th
	addr := w.Node.Addresses[0].Addr()
	for _, old := range t.whois {
		if old.Addr == addr.String() {
			return KindWhoIs, "a second reply for " + addr.String() + ": the first is kept", true
		}
	}
	if len(t.whois) >= snapshot.MaxPeers {
		return "", "", false
	}
	t.whois = append(t.whois, snapshot.WhoIs{Addr: addr.String(), Node: w.Node})
	name, _, _ := strings.Cut(w.Node.Name, ".")
	return KindWhoIs, fmt.Sprintf("node %s %s: %d endpoints, home DERP %d", safetext.Clean(name), addr, len(w.Node.Endpoints), w.Node.HomeDERP), true
}

// statusFragment reads one entry of `tailscale status --json`: a peer
// (cut from its Peer map, or standing alone) or our Self.
func (p *paste) statusFragment(raw []byte, self bool) (kind, note string, ok bool) {
	var ps ipnstate.PeerStatus
	if json.Unmarshal(raw, &ps) != nil || (len(ps.TailscaleIPs) == 0 && ps.HostName == "") {
		return "", "", false
	}
	t := &p.th
	p.noteTime(ps.LastWrite)
	p.noteTime(ps.LastHandshake)
	if self {
		t.selfFrag = &ps
		return KindStatusFragment, "our own entry", true
	}
	if len(t.frags) >= snapshot.MaxPeers {
		return "", "", false
	}
	t.frags = append(t.frags, &ps)
	var what string
	switch {
	case ps.CurAddr != "":
		what = "direct " + ps.CurAddr
	case ps.PeerRelay != "":
		what = "peer-relay " + ps.PeerRelay
	case ps.Relay != "" && ps.Active:
		what = "relay " + ps.Relay
	case ps.Active:
		what = "active"
	default:
		what = "idle"
	}
	if ps.PrimaryRoutes != nil && ps.PrimaryRoutes.Len() > 0 {
		what += fmt.Sprintf("; advertises %d routes", ps.PrimaryRoutes.Len())
	}
	return KindStatusFragment, safetext.Clean(fmt.Sprintf("peer %s: %s", cmpStr(firstLabel(ps.DNSName), ps.HostName), what)), true
}

// mergeFragments puts the status entries cut from `tailscale status
// --json` into st: a peer the status has (by address, else name) gets
// the fields its entry holds that the text lacks (endpoints of the path,
// handshake, routes); another becomes a peer of its own. It returns the
// ids of the peers whose handshake the entries show.
func (p *paste) mergeFragments(st *ipnstate.Status) map[string]bool {
	t := &p.th
	known := map[string]bool{}
	if f := t.selfFrag; f != nil && st.Self != nil {
		if st.Self.OS == "" {
			st.Self.OS = f.OS
		}
		if len(st.Self.TailscaleIPs) == 0 {
			st.Self.TailscaleIPs = f.TailscaleIPs
			st.TailscaleIPs = f.TailscaleIPs
		}
		if st.Self.HostName == "" {
			st.Self.HostName, st.Self.DNSName = f.HostName, f.DNSName
		}
		if st.Self.CapMap == nil {
			st.Self.CapMap = f.CapMap
		}
	}
	for _, f := range t.frags {
		var into *ipnstate.PeerStatus
		for _, ps := range allPeers(st) {
			if ps == st.Self {
				continue
			}
			for _, a := range f.TailscaleIPs {
				for _, b := range ps.TailscaleIPs {
					if a == b {
						into = ps
					}
				}
			}
			if into == nil && f.HostName != "" && strings.EqualFold(shortHost(ps), cmpStr(firstLabel(f.DNSName), f.HostName)) {
				into = ps
			}
			if into != nil {
				break
			}
		}
		if into == nil {
			c := *f
			if c.ID == "" {
				id := "name:" + strings.ToLower(f.HostName)
				if len(f.TailscaleIPs) > 0 {
					id = "ip:" + f.TailscaleIPs[0].String()
				}
				c.ID = tailcfg.StableNodeID(id)
			}
			if c.PublicKey.IsZero() {
				c.PublicKey = placeholderKey(string(c.ID))
			}
			if st.Peer == nil {
				st.Peer = map[key.NodePublic]*ipnstate.PeerStatus{}
			}
			st.Peer[c.PublicKey] = &c
			if !c.LastHandshake.IsZero() {
				known[string(c.ID)] = true
			}
			p.noteTime(c.LastWrite)
			p.noteTime(c.LastHandshake)
			continue
		}
		if into.CurAddr == "" && into.Relay == "" && into.PeerRelay == "" {
			into.CurAddr, into.Relay, into.PeerRelay, into.Active = f.CurAddr, f.Relay, f.PeerRelay, f.Active
		}
		if into.OS == "" {
			into.OS = f.OS
		}
		if into.TxBytes == 0 && into.RxBytes == 0 {
			into.TxBytes, into.RxBytes = f.TxBytes, f.RxBytes
		}
		if into.PrimaryRoutes == nil {
			into.PrimaryRoutes = f.PrimaryRoutes
		}
		if into.LastHandshake.IsZero() && !f.LastHandshake.IsZero() {
			into.LastHandshake = f.LastHandshake
			known[string(into.ID)] = true
		}
		if into.KeyExpiry == nil {
			into.KeyExpiry, into.Expired = f.KeyExpiry, f.Expired
		}
		p.noteTime(f.LastWrite)
		p.noteTime(f.LastHandshake)
	}
	return known
}

// firstLabel is the first label of a DNS name.
func firstLabel(s string) string {
	l, _, _ := strings.Cut(s, ".")
	return l
}
