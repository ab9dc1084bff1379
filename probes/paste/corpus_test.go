package paste

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
	"github.com/tailpath/tailpath/probes/snapshot"
)

var updateCorpus = flag.Bool("update-corpus", false, "rewrite testdata/corpus/*.golden")

// corpusSources names, for every paste in testdata/corpus, the format
// strings it was written from: the Tailscale source file and the version
// (cmd/tailscale/cli's status.go and ping.go are byte-identical between
// v1.102.5 and v1.104.7; netcheck.go differs only in ordering regions of
// equal latency by id; older versions from the history of
// github.com/tailscale/tailscale). Addresses are documentation ranges
// (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24), private ranges and
// tailnet addresses.
var corpusSources = map[string]string{
	// tailscale status
	"status-1.50-fixed-width.txt":      "cmd/tailscale/cli/status.go printPS @ v1.50.0 (%-15s %-20s %-12s %-7s columns; bare \"offline\"; \"active; \" with no relay)",
	"status-1.60-exit-node.txt":        "cmd/tailscale/cli/status.go printPS @ v1.60.0 (exit node words, \"; offline\" without a time)",
	"status-1.86-peer-relay.txt":       "cmd/tailscale/cli/status.go printPS @ v1.86.0 (\"peer-relay %s\", ip:port:vni:N from magicsock epAddr.String)",
	"status-1.90-tabwriter.txt":        "cmd/tailscale/cli/status.go @ v1.90.0 (text/tabwriter columns; cli.go lastSeenFmt)",
	"status-1.102-header.txt":          "cmd/tailscale/cli/status.go @ v1.102.5 (--header; dnsOrQuoteHostname's xn-- and (\"quoted\") names)",
	"status-1.104.txt":                 "cmd/tailscale/cli/status.go printPS, printHealth @ v1.104.7 (unchanged from v1.102.5): relay \"sin\" of region 5000000000, peer-relay, idle exit node offer, offline",
	"status-self-false.txt":            "cmd/tailscale/cli/status.go @ v1.102.5 with --self=false (no line for us)",
	"status-single-line.txt":           "one line of cmd/tailscale/cli/status.go printPS @ v1.102.5, quoted in a post",
	"status-windows-crlf.txt":          "cmd/tailscale/cli/status.go @ v1.102.5 run in PowerShell (CRLF, PS prompt)",
	"status-utf16.txt":                 "cmd/tailscale/cli/status.go @ v1.102.5 redirected by PowerShell 5 (UTF-16LE with a byte-order mark)",
	"status-headscale.txt":             "cmd/tailscale/cli/status.go ownerLogin @ v1.102.5 against headscale (logins without \"@\", a numeric user id)",
	"status-health-1.50.txt":           "cmd/tailscale/cli/status.go printHealth @ v1.50.0; health/health.go checkReceiveFuncs (\"ReceiveIPv4 is not running\") @ v1.50.0",
	"status-health-1.102.txt":          "cmd/tailscale/cli/status.go printHealth @ v1.102.5; health/warnings.go magicsockReceiveFuncWarnable @ v1.102.5",
	"status-health-alone.txt":          "cmd/tailscale/cli/status.go printHealth @ v1.102.5 quoted alone; health/warnings.go magicsockReceiveFuncWarnable, noDERPHomeWarnable",
	"status-logged-out.txt":            "cmd/tailscale/cli/status.go isRunningOrStarting @ v1.102.5 (\"Logged out.\", \"Log in at: \")",
	"status-stopped.txt":               "cmd/tailscale/cli/status.go isRunningOrStarting @ v1.102.5 (\"Tailscale is stopped.\")",
	"status-placeholders.txt":          "cmd/tailscale/cli/status.go @ v1.102.5 with the poster's placeholders (100.xxx.xxx.xxx, [redacted], x.y.z.w, <ip>:<port>)",
	"status-forum-mangled.txt":         "cmd/tailscale/cli/status.go @ v1.102.5 through forum software (typographic quotes, non-breaking spaces, tabs)",
	"status-wrapped-80.txt":            "cmd/tailscale/cli/status.go @ v1.102.5 re-wrapped at 80 columns",
	"status-fragment.txt":              "a piece of a cmd/tailscale/cli/status.go printPS @ v1.102.5 line, its address and name cut off",
	"status-markdown.txt":              "cmd/tailscale/cli/status.go @ v1.102.5 quoted in Markdown (> and ``` fences)",
	"status-two-nodes.txt":             "cmd/tailscale/cli/status.go @ v1.102.5 from two different nodes in one paste: the first is this node, the second the peer's own, which says nothing of its end (a warning)",
	"status-and-json-concatenated.txt": "cmd/tailscale/cli/status.go --json (ipnstate.Status) @ v1.102.5, then tailscaled's journal (wgengine/magicsock magicsock.go)",
	// tailscale ping
	"ping-lost-direct.txt":         "cmd/tailscale/cli/ping.go runPing @ v1.102.5, three runs in order: direct, timed out, DERP only; the path went direct first and then fell back (lost-direct heads the verdict), the last run's DERP-only pongs stay as disco-unanswered in \"also\"",
	"ping-zsh-time.txt":            "cmd/tailscale/cli/ping.go runPing @ v1.102.5, three runs under zsh prompts with `time`",
	"ping-tsmp.txt":                "cmd/tailscale/cli/ping.go runPing --tsmp @ v1.102.5 (via = pingType(); stops after one pong; PeerAPIPort)",
	"ping-icmp.txt":                "cmd/tailscale/cli/ping.go runPing --icmp @ v1.102.5",
	"ping-c1-lone-derp.txt":        "cmd/tailscale/cli/ping.go runPing -c 1 @ v1.102.5 (one DERP pong, then \"direct connection not established\")",
	"ping-no-reply.txt":            "cmd/tailscale/cli/ping.go runPing @ v1.102.5 (every ping timed out: \"no reply\")",
	"ping-peer-relay.txt":          "cmd/tailscale/cli/ping.go runPing @ v1.86.0 (\"peer-relay(%s)\")",
	"ping-placeholder-direct.txt":  "cmd/tailscale/cli/ping.go runPing @ v1.102.5 with the poster's placeholder address (203.0.xx.xx:56028)",
	"ping-local-ip.txt":            "cmd/tailscale/cli/ping.go runPing @ v1.102.5 (\"%v is local Tailscale IP\") and a pong",
	"ping-powershell.txt":          "cmd/tailscale/cli/ping.go runPing @ v1.50.0 in PowerShell (CRLF)",
	"ping-with-status.txt":         "cmd/tailscale/cli/status.go and ping.go @ v1.102.5: a ping to a peer of the status",
	"ping-unresolved-name.txt":     "cmd/tailscale/cli/ping.go @ v1.102.5: timeouts name the address, the prompt the name",
	"ping-1.104.txt":               "cmd/tailscale/cli/ping.go runPing @ v1.104.7 (unchanged from v1.102.5; DERPRegionID now tailcfg.DERPRegionID): DERP(sin) of region 5000000000, peer-relay(…) with -c 2, DERP then direct",
	"netcheck-1.50-hairpin.txt":    "cmd/tailscale/cli/netcheck.go printReport @ v1.50.0 (HairPinning, no Time)",
	"netcheck-1.80-rfc3339.txt":    "cmd/tailscale/cli/netcheck.go printReport @ v1.80.0 (Time as RFC 3339 with nanoseconds)",
	"netcheck-1.102-local.txt":     "cmd/tailscale/cli/netcheck.go printReport @ v1.102.5 (Time as tstime.DateSpTimeNanoZ, local)",
	"netcheck-1.104-ties.txt":      "cmd/tailscale/cli/netcheck.go printNetCheckReport --verbose @ v1.104.7 (regions sorted by netcheck.RegionLatency.Compare: latency, then id; derp%d of region 5000000000)",
	"netcheck-go-time-string.txt":  "cmd/tailscale/cli/netcheck.go printReport @ v1.102.5, its Time retyped as Go's time.Time.String()",
	"netcheck-logged-out.txt":      "cmd/tailscale/cli/netcheck.go printReport @ v1.102.5 with nothing measured (no DERP map)",
	"netcheck-udp-blocked.txt":     "cmd/tailscale/cli/netcheck.go printReport @ v1.102.5; net/netcheck HTTPS latency fallback (UDP false, latencies)",
	"netcheck-every-flapping.txt":  "cmd/tailscale/cli/netcheck.go --every @ v1.102.5 (one report per run; MappingVariesByDestIP flips)",
	"netcheck-verbose.txt":         "cmd/tailscale/cli/netcheck.go --verbose @ v1.102.5 (derpN in region lines; portmap: and netcheck: log lines)",
	"netcheck-json-empty.txt":      "cmd/tailscale/cli/netcheck.go --format=json @ v1.102.5 (net/netcheck.Report) with nothing measured",
	"netcheck-json-1.104.txt":      "cmd/tailscale/cli/netcheck.go --format=json @ v1.104.7: net/netcheck.Report as v1.104's encoder writes it (PreferredDERP and RegionLatency keys tailcfg.DERPRegionID, 5000000000 among them)",
	"netcheck-redacted-fields.txt": "cmd/tailscale/cli/netcheck.go printReport @ v1.102.5 with [redacted] fields",
	// tailscaled logs
	"log-journal.txt":                   "journald short format of tailscaled @ v1.102.5 (wgengine/magicsock derp.go, magicsock.go; net/netcheck logConciseReport)",
	"log-journal-o-cat.txt":             "journalctl -o cat with the identifier kept, tailscaled @ v1.102.5 (magicsock endpoints changed, home is now)",
	"log-docker.txt":                    "docker logs -t and docker compose logs of a tailscale container @ v1.102.5 (Go log times inside)",
	"log-windows.txt":                   "tailscaled's Windows log file, log/filelogger appendToFileLocked @ v1.102.5 (DateTTimeMilliZ + \": \")",
	"log-go-time-string.txt":            "tailscaled lines quoted with Go's time.Time.String() (\"-0400 -0400:\", \"+0000 UTC:\") @ v1.102.5",
	"log-embedded-prefix.txt":           "a program embedding tailscale.com @ v1.102.5 with its own logger prefix (\"… wgengine: netcheck: [v1] report: …\")",
	"log-netcheck-empty.txt":            "net/netcheck logConciseReport @ v1.50.0 (hair=; empty opt.Bool fields, derp=0)",
	"log-netinfo-pager.txt":             "control/controlclient/direct.go \"NetInfo: %v\" with tailcfg.NetInfo.String @ v1.80.0 (hairpin=), cut by less -S",
	"log-udp-blocked.txt":               "net/netcheck GetReport \"UDP is blocked, trying HTTPS\" and logConciseReport @ v1.102.5",
	"log-control-mtu.txt":               "control/controlclient/auto.go mapRoutine and ipn/ipnlocal \"Received error: %v\"; logtail upload @ v1.102.5",
	"log-receive-stopped.txt":           "ipn/ipnlocal \"health(warnable=%s): error: %s\"; health/warnings.go magicsockReceiveFuncWarnable @ v1.102.5",
	"log-derp-unreachable.txt":          "wgengine/magicsock derp.go \"derp.Recv(derp-%d): %v\" with derp/derphttp \"%s connect to %v: %v\" @ v1.102.5",
	"log-derp-proxy.txt":                "derp/derphttp/derphttp_client.go \"derphttp: CONNECT dial to %s: %v\" @ v1.102.5",
	"log-derp-proxy-port.txt":           "derp/derphttp/derphttp_client.go dialNodeUsingProxy logs \"CONNECT dial to %s: %v\" with the proxy's status, 200 too; the TLS error after it @ v1.102.5; tailscale#19748 (port 443 whatever DERPPort, before 1.100)",
	"log-derp-selfhosted-eof.txt":       "wgengine/magicsock derp.go \"derp.Send(%v): %v\" with derp/derphttp \"%s connect to %v: %v\" @ v1.102.5; region ids 900-999 are custom (tailscale.com/kb/1118/custom-derp-servers)",
	"log-linkchange-masked-cgnat.txt":   "wgengine/userspace.go \"LinkChange: major, rebinding. New state:\" @ v1.50.0 with the poster's placeholder octets; net/netmon State.String; MediaTek's ccmni mobile interface",
	"log-linkchange-masked-outside.txt": "as log-linkchange-masked-cgnat, but 100.x.y.z could fall either side of 100.64.0.0/10: no collision from it",
	"log-upnp-not-gateway.txt":          "net/portmapper \"UPnP discovery response from %v, but gateway IP is %v\" @ v1.102.5",
	"log-linkchange.txt":                "wgengine/userspace.go \"LinkChange: major, rebinding\" @ v1.50.0 (New state) and v1.102.5 (old/new); net/netmon State.String",
	"log-health-1.50.txt":               "ipn/ipnlocal \"health(%q): error: %v\" @ v1.50.0",
	"log-udp-flapping.txt":              "net/netcheck logConciseReport @ v1.102.5, UDP coming and going",
	"log-disco.txt":                     "wgengine/magicsock endpoint.go \"disco: node %v %v now using %v\", \"got pong\"; home DERP changing @ v1.102.5",
	// The review of the reason catalogue against v1.102.5: each paste's
	// right verdict, and the code it rests on.
	"log-portmap-double-nat.txt":         "wgengine/magicsock magicsock.go \"endpoints changed: %s\" with tailcfg.EndpointType words (portmap, stun, stun4localport, local) @ v1.102.5; net/portmapper/upnp.go selectBestService \"ext-private\": a mapping on a router whose external address is private, advertised unchecked by determineEndpoints; our hard NAT needed it: local-double-nat, never local-portmap-blocked",
	"log-portmap-double-nat-easy.txt":    "as log-portmap-double-nat.txt, our NAT easy (varies=false) and the peer's unknown: whether a mapping was needed is unknown, so unexplained, never local-portmap-blocked",
	"netcheck-cli-hard.txt":              "cmd/tailscale/cli/netcheck.go runNetcheck @ v1.102.5: netcheck.Client.Standalone binds an OS-assigned port (net/netcheck/standalone.go, \":0\"), not tailscaled's; on Windows tailscaled binds 41641 (cmd/tailscaled/tailscaled.go defaultPort), and only a static-port rule naming 41641 would make the two differ: local-hard-nat, worded \"probably\"",
	"log-udp-blocked-then-stun.txt":      "net/netcheck/netcheck.go GetReport \"netcheck: UDP is blocked, trying HTTPS\" @ v1.102.5, then magicsock determineEndpoints's (stun) endpoint, which only a STUN reply gives (kept 5m10s, endpointTrackerLifetime): the line is contradicted, UDP unknown, never local-udp-blocked",
	"log-derp-failed-then-connected.txt": "wgengine/magicsock derp.go \"derp.Recv(derp-%d): %v\" with derp/derphttp \"connect to region\", then \"magicsock: derp-%d connected; connGen=%v\" (derp.go, logged when the connection succeeds) @ v1.102.5: the failure is over, no derp-unreachable",
	"log-upnp-not-gateway-mapped.txt":    "net/portmapper/portmapper.go Client.Probe \"UPnP discovery response from %v, but gateway IP is %v\" and upnp.go getUPnPRootDevice \"repointing at gateway which is assumed to be floating\" @ v1.102.5, then a (portmap) endpoint and NetInfo portmap=active-U: a mapping is held, no self verdict",
	"log-control-eof-apart.txt":          "ipn/ipnlocal/local.go \"Received error: %v\" and control/controlclient/auto.go UpdateFullNetmap \"[v1] mapRoutine: netmap received\" @ v1.102.5: two breaks a day apart, a whole netmap after each, are no run: no self-control-breaking",
	"ping-tsmp-no-reply.txt":             "cmd/tailscale/cli/ping.go runPing --tsmp -c 3 @ v1.102.5 (every ping timed out, \"no reply\"): a TSMP ping names no path, so path-unknown, never a relayed path",
	"status-health-receive-ipv6.txt":     "cmd/tailscale/cli/status.go printHealth and health/warnings.go magicsockReceiveFuncWarnable @ v1.102.5; health.go checkReceiveFuncsLocked tracks ReceiveIPv4 and ReceiveIPv6 apart: IPv6 only, the direct IPv4 path stands",
	"log-netcheck-one-region.txt":        "net/netcheck logConciseReport @ v1.102.5 with one region in derpdist: addNodeLatency sets mapvarydest=false on a second reply, which one region's server gives too, so the NAT type is unknown",
	"status-self-false-prompt.txt":       "cmd/tailscale/cli/status.go @ v1.102.5 with --self=false on the prompt line: its first line, an idle peer, reads \"-\" as our own would; only the prompt says no line is ours",
	"thread-everything.txt":              "a forum thread: status.go, netcheck.go, ping.go and a journal of tailscaled @ v1.102.5, with chatter and prompts",
	"thread-concatenated.txt":            "several pastes concatenated: netcheck.go @ v1.90.0, ping.go and status.go @ v1.90.0",
	"thread-truncated.txt":               "status.go --json @ v1.102.5 cut short, then netcheck.go @ v1.102.5",
	// Issue 28: verdicts that another fact of the same input refutes.
	"thread-stun-dead-peer-direct.txt":  "cmd/tailscale/cli/status.go and netcheck.go @ v1.102.5: STUN unanswered (UDP: false, latencies by HTTPS) while a peer is direct; wgengine/magicsock/endpoint.go handlePongConnLocked makes a direct address only after a UDP pong, so UDP works: no local-udp-blocked, self-stun-unanswered",
	"thread-offline-pongs.txt":          "cmd/tailscale/cli/status.go (\"offline, last seen\") and ping.go @ v1.102.5: pongs via DERP are sealed by the peer's running magicsock (handlePingLocked), so it is up: offline refuted",
	"status-health-derp-issue.txt":      "cmd/tailscale/cli/status.go printHealth and health/warnings.go derpRegionErrorWarnable (\"The relay server #%v is reporting an issue: %v\") @ v1.102.5; the problem text after the colon is the server's own, ours here; wgengine/magicsock/derp.go runDerpReader sets it only from a health frame over a live connection, whose only unhealthy state is a duplicate key (derp/derp.go FrameHealth): self-derp-server-warns, never derp-unreachable",
	"thread-derp-home-unknown.txt":      "cmd/tailscale/cli/status.go and a journal of tailscaled @ v1.102.5 (magicsock derp.go \"derp-%d connected\", derphttp connect failures): another region fails, our home is unknown (health.go warns of the home region only): no self derp-unreachable",
	"thread-cli-netcheck-differs.txt":   "net/netcheck logConciseReport @ v1.102.5 (three agreeing reports of tailscaled's socket) and cmd/tailscale/cli/netcheck.go printReport @ v1.102.5 (netcheck.Client.Standalone, its own socket on port 0): two sockets, not a network that changes: no self-netcheck-flaps",
	"thread-version-stun-port-zero.txt": "version/print.go String (\"long version:\") and cmd/tailscale/cli status.go, netcheck.go @ v1.77.165: that build's netcheck sent STUN to port 0 (tailscale/tailscale#14287, fixed in 1.77.168): known-client-bug, local-udp-blocked refuted",
	"log-windows-receive-stopped.txt":   "cmd/tailscale/cli/status.go printHealth (1.54's \"ReceiveIPv4 is not running\") and cmd/tailscaled/tailscaled_windows.go \"Program starting: v%v: %#v\" @ v1.54.0: Windows' receive loop stopping (tailscale/tailscale#10375, #10976): known-client-bug",
	// threads (issue 29): prose, host facts, DERP maps, daemon lines and their links
	"thread-prose-bullets-netcheck.txt":   "cmd/tailscale/cli/netcheck.go printReport @ v1.102.5 fields retyped as Markdown bullets (source: prose), status.go printPS in a fence: the CLI's own socket (netcheck.Client.Standalone) read hard on Linux with tailscaled's port unknown, so the NAT type stays unknown: unexplained",
	"thread-prose-sentence-udp-false.txt": "netcheck.go printReport's \"UDP: false\" inside a sentence (source: prose) with no latency or address beside it: a report that measured nothing also says false (net/netcheck: no DERP map, no probes), so UDP is unknown, not blocked: unexplained",
	"thread-prose-hedge-only.txt":         "netcheck.go field names inside questions and suppositions (\"I thought UDP: false meant…\"): no fact is read from them, the NAT stays unknown: unexplained",
	"thread-quote-status-line.txt":        "cmd/tailscale/cli/status.go printPS and ping.go runPing @ v1.102.5 inside Markdown quotes: pongs only via DERP(nyc) after pings to every endpoint (wgengine/magicsock endpoint.discoPing): disco-unanswered",
	"thread-fence-half-report.txt":        "half of netcheck.go printReport in a code fence (its Report: line cut off: the items are read as prose) and a status.go line in backticks: easy NAT with UPnP, nothing else checked holds: unexplained",
	"thread-chat-table.txt":               "netcheck.go's fields as a Markdown table from a chat (source: prose): MappingVariesByDestIP true is the CLI's own socket's, tailscaled's port unknown on Linux: NAT type unknown, unexplained",
	"thread-ip-link-tailscale0-down.txt":  "iproute2 `ip -br link` (tailscale0 DOWN: net/tstun's device is not up) and status.go printPS @ v1.102.5: a warning that the tunnel carries nothing; the peer is offline by its own status words",
	"thread-docker-bridge-guest.txt":      "iproute2 `ip -br addr` with docker0 172.17.0.1/16 and status.go's \"direct 172.17.0.2:41641\": the peer is this host's own container (magicsock endpoint.go betterAddr prefers the bridge address): direct, with the Link.GuestBridge check",
	"thread-vmnet-bridge100.txt":          "macOS ifconfig (bridge100, vmnet's shared network 192.168.64.0/24; utun4 tailscaled's tunnel) and status.go: the VM is this Mac's guest: direct, with the Link.GuestBridge check",
	"thread-virbr0-ifconfig.txt":          "net-tools ifconfig (virbr0, libvirt's 192.168.122.0/24) and status.go: the KVM guest is this host's own: direct, with the Link.GuestBridge check",
	"thread-wsl-vethernet.txt":            "Windows ipconfig (vEthernet (WSL), Hyper-V's 172.29.48.0/20, a blank line after each adapter's name) and status.go: WSL2 is this PC's guest: direct, with the Link.GuestBridge check",
	"thread-tx-rx-one-way.txt":            "status.go printPS \"tx %d rx %d\" (wireguard-go device/peer.go counts every packet sent, device/receive.go only authenticated ones received): 812000 sent against 2048 back on a direct path: direct also one-way-traffic",
	"thread-icmp-vs-disco.txt":            "cmd/tailscale/cli/ping.go --icmp (tailcfg.PingICMP answered by the peer's OS) timed out while a DISCO ping (magicsock handlePingLocked, answered by tailscaled) ponged directly: direct also peer-icmp-blocked",
	"thread-ping-runs-order.txt":          "ping.go runPing @ v1.102.5, three runs in order: direct, direct, then DERP only with \"direct connection not established\": the path was direct and fell back, so lost-direct heads the verdict",
	"thread-cli-hard-macos.txt":           "netcheck.go printReport @ v1.102.5 (netcheck.Client.Standalone, its own OS-assigned port) on macOS, where the app passes no --port and tailscaled binds 0 (cmd/tailscaled/tailscaled.go defaultPort): the CLI's hard NAT is probably tailscaled's: local-hard-nat, worded \"probably\"",
	"thread-cli-hard-fixed-port.txt":      "netcheck.go's hard reading from the CLI's own port while tailscaled runs with --port=41641, which a static-port rule can name (the poster says the router has one): the CLI's reading says nothing of tailscaled's port: unexplained",
	"thread-k8s-pod-userspace.txt":        "cmd/containerboot (\"boot: \" lines; --state=kube:, --tun=userspace-networking), logpolicy \"Program starting\" and net/netcheck logConciseReport mapvarydest=true @ v1.102.5, status from inside the pod: the cluster's NAT maps per destination: local-hard-nat, its pod variant (host networking is the fix)",
	"thread-headscale-regionid-zero.txt":  "headscale's DERP map YAML (tailcfg.DERPMap field names lowercased) whose node has no regionid: net/netcheck addNodeLatency files STUN replies under node.RegionID (0), so region 900 is never measured: derp-region-unmeasured",
	"thread-debug-derp-no-stun.txt":       "ipn/localapi/debugderp.go (`tailscale debug derp 900`: \"did not return a IPv4 STUN response\") with a netcheck that measured other regions only: derp-region-unmeasured",
	"thread-derp-peer-gone.txt":           "wgengine/magicsock/derp.go \"derp-%d does not know about peer %s, removing route\" (PeerGoneReasonNotHere) on the region status.go names as relay \"nyc\" (derp-1 by Tailscale's map, derp/derpmap): Link.Region and Log.PeersGone checks; no cause checked holds: unexplained",
	"thread-peer-relay-alloc-timeout.txt": "wgengine/magicsock/relaymanager.go \"sent alloc request\", \"alloc request timed out\" (debug logging) while status.go shows relay \"sfo\": the peer relay gave no endpoint, the Log.PeerRelay check says so; no cause checked holds: unexplained",
	"thread-portmap-refused.txt":          "net/portmapper \"UPnP returned unspecified external IP\" and net/netcheck logConciseReport mapvarydest=true portmap= @ v1.102.5: tailscaled's own socket behind a hard NAT with no mapping: local-hard-nat",
	"thread-derp-region-link-default.txt": "magicsock derp.go \"derp-%d connected\" and \"does not know about peer\" with status.go's relay \"sfo\": no DERP map in the input, so derp-2 is tied to sfo by Tailscale's own map (derp/derpmap) as a link only, never a fact a rule reads: unexplained with Link.Region",
	"thread-prose-conflicting.txt":        "netcheck.go's \"UDP:\" field typed twice from memory with two values (source: prose): a field given two values is unknown: unexplained",
	"thread-maintainer-qa-prefs.txt":      "a maintainer's question quoted, ipn.Prefs as `tailscale debug prefs` prints it (JSON: RouteAll true, NetfilterMode) and status.go on FreeBSD: the route the poster names only in words is no fact (never invented), so the direct path stays direct",
	"thread-two-machines.txt":             "two nodes' status.go outputs in one paste and the VPS's netcheck.go report after its own status: the first status is this node's, the VPS's lines (its status line is the peer's address) are the peer's own end: its easy NAT and working UDP as peer-side checks, nothing checked holds: unexplained",
	"thread-version-and-prefs.txt":        "version/print.go (\"long version:\"), ipn/prefs.go Prefs.Pretty (\"Prefs{ra=false … nf=on …}\") and status.go @ v1.102.5: routes not accepted, no NAT facts: unexplained",
	"thread-get-netadapter.txt":           "PowerShell Get-NetAdapter (the Tailscale adapter Disconnected: wintun is down) and status.go's \"tx 700 rx 0\": a warning that the tunnel is down, and nothing ever came back: no-handshake",
	"thread-derpmap-hujson-policy.txt":    "a tailnet policy file's derpMap in HuJSON (comments, trailing commas; tailscale/hujson Standardize) with STUNPort -1 on its only node and OmitDefaultRegions: net/netcheck makeProbePlan sends it no STUN probe: derp-region-unmeasured",
	"thread-ip-rule-no-bypass.txt":        "iproute2 `ip rule` without tailscaled's 5210 fwmark rule (wgengine/router/osrouter/router_linux.go baseIPRules), `ip route show table 52` with 10.50.0.0/16 and status.go's direct 10.50.3.7:41641 inside it: the UDP follows the route into tailscale0: direct also direct-in-tunnel, one-way-traffic",
	"thread-status-json-peer.txt":         "one entry of ipnstate.Status.Peer as cmd/tailscale/cli/status.go --json @ v1.102.5 writes it (json.MarshalIndent), cut out and fenced alone: the peer is read with this node unknown, active with no CurAddr or PeerRelay is DERP (ipnstate.PeerStatus's Relay, Classify); no cause checked holds: unexplained",
	"thread-jq-peers.txt":                 "`jq '.Peer[] | {…}'` over status.go --json @ v1.102.5: three ipnstate.PeerStatus objects one after another, not in an array, and not under a status (this node unknown): pi relayed, laptop direct, phone idle (not Active) and offline",
	"thread-two-machines-prompts.txt":     "bash prompts naming two hosts (tom@desktop, tom@office): desktop's status.go and netcheck.go @ v1.102.5 (easy NAT, no port-mapping service answered), then office's version/print.go and journal (magicsock endpoints changed, net/netcheck logConciseReport mapvarydest=true portmap=): office's lines are the peer's own end (probes.PeerSide, as NetInfo gives it live), its hard NAT with no mapping against our easy one: peer-hard-nat",
	"thread-two-machines-other-side.txt":  "\"On the other side:\" before a netcheck.go @ v1.102.5 report with UDP false and latencies (net/netcheck's HTTPS fallback), after this node's status.go with one peer: the report is that peer's end (NetInfo.WorkingUDP false as the peer reports it), not ours: peer-udp-blocked, and our NAT stays unknown",
	"thread-two-machines-set-aside.txt":   "this node's status.go and netcheck.go @ v1.102.5 (two peers), then \"And from node B:\" and a second netcheck.go report with MappingVariesByDestIP true: no peer is named B, so which peer's end it is is unknown: set aside with a warning naming its lines, our own easy NAT kept (the second report never replaces it): unexplained",
	"binary.txt":                          "not text (an ELF header): one error line",
	"chatter-only.txt":                    "no Tailscale line at all: one error line",
}

// TestCorpus reads every paste of testdata/corpus as `status --from`
// does and compares what it recognised and the verdicts (ours and each
// peer's) with its .golden (regenerate with -update-corpus).
func TestCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 40 {
		t.Errorf("%d pastes in the corpus, want at least 40", len(files))
	}
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(strings.TrimSuffix(name, ".txt"), func(t *testing.T) {
			src, ok := corpusSources[name]
			if !ok {
				t.Fatalf("%s: no entry in corpusSources naming the format it follows", name)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got := "# " + name + "\n# follows: " + src + "\n" + renderCorpus(t, name, data)
			golden := strings.TrimSuffix(path, ".txt") + ".golden"
			if *updateCorpus {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update-corpus to create it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", name, diff)
			}
		})
	}
	for name := range corpusSources {
		if !slices.Contains(files, filepath.Join("testdata", "corpus", name)) {
			t.Errorf("corpusSources names %s, which is not in testdata/corpus", name)
		}
	}
}

// renderCorpus is what the golden holds of one paste: the inputs
// recognised, the ignored lines, the warnings, our facts and verdict with
// its checks, and each peer's path, evidence and verdict.
func renderCorpus(t *testing.T, name string, data []byte) string {
	var b strings.Builder
	f, err := Parse([]Raw{{Name: name, Data: data}}, pasteNow)
	if err != nil {
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("multi-line error %q", err)
		}
		fmt.Fprintf(&b, "error: %v (ErrNotSnapshot %v)\n", err, errors.Is(err, snapshot.ErrNotSnapshot))
		return b.String()
	}
	ls, err := roundTrip(t, f).Diagnose(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	checkRedacted(t, f, ls)
	fmt.Fprintf(&b, "taken: %s (%s)\n", f.Taken.UTC().Format("2006-01-02 15:04:05.000Z"), f.TakenFrom)
	b.WriteString("inputs:\n")
	for _, in := range f.Inputs {
		where := "-"
		if in.Name != "" {
			where = fmt.Sprintf("%d-%d", in.First, in.Last)
		}
		fmt.Fprintf(&b, "  %s %s: %s\n", where, in.Kind, in.Note)
	}
	if len(f.Ignored) > 0 {
		var lines []string
		for _, ig := range f.Ignored {
			lines = append(lines, fmt.Sprint(ig.Line))
		}
		fmt.Fprintf(&b, "ignored lines: %s\n", strings.Join(lines, ", "))
	}
	for _, w := range ls.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	renderSelf(&b, ls)
	for _, p := range ls.Peers {
		renderPeer(&b, p)
	}
	return b.String()
}

func renderSelf(b *strings.Builder, ls *join.Snapshot) {
	s := ls.Self
	fmt.Fprintf(b, "self: name=%q ips=%v state=%q home=%d%s", s.Name, s.TailscaleIPs, ls.BackendState, s.HomeDERP, codeOf(string(s.HomeDERPCode)))
	if n := s.NAT; n != nil {
		fmt.Fprintf(b, " udp=%s mapping-varies=%s portmap=%v", tri(n.WorkingUDP), tri(n.MappingVariesByDestIP), n.HavePortMap)
		if n.PortMapUnknown {
			b.WriteString("(unknown)")
		}
		fmt.Fprintf(b, " derp-latencies=%d", len(n.DERPLatency))
	} else {
		b.WriteString(" nat=unknown")
	}
	if len(s.Endpoints) > 0 {
		fmt.Fprintf(b, " endpoints=%v", s.Endpoints)
	}
	b.WriteString("\n")
	for _, h := range s.Health {
		fmt.Fprintf(b, "  health: %s\n", h)
	}
	if v := s.Verdict; v != nil {
		fmt.Fprintf(b, "  self verdict: %s also %v\n", v.Reason, v.Also)
		for _, c := range v.Checks {
			fmt.Fprintf(b, "    %s %s = %s (%s)\n", c.Mark(), c.Field, c.Value, c.Source)
		}
	} else {
		b.WriteString("  self verdict: none\n")
	}
}

func renderPeer(b *strings.Builder, p probes.Peer) {
	fmt.Fprintf(b, "peer %q id=%s ips=%v os=%q: path %s %q", p.Name, p.ID, p.TailscaleIPs, p.OS, p.Path.Kind, p.Path.Text)
	if p.Online != nil {
		fmt.Fprintf(b, " online=%v(%s)", *p.Online, p.OnlineSource)
	}
	if p.TxBytes != 0 || p.RxBytes != 0 {
		fmt.Fprintf(b, " tx=%d rx=%d", p.TxBytes, p.RxBytes)
	}
	if p.Latency > 0 {
		fmt.Fprintf(b, " latency=%v", p.Latency)
	}
	if r := p.PingRun; r != nil {
		fmt.Fprintf(b, " ping-run=%d/%d direct=%v via=%q", r.Pongs, r.Tries, r.Direct, r.Via)
	}
	if !p.LastDirect.IsZero() {
		fmt.Fprintf(b, " last-direct=%v", p.LastDirectAddr)
	}
	b.WriteString("\n")
	if s := p.PeerSide; s != nil && s.Source == probes.SourcePeerSnapshot {
		// Its own end, read from its output in the same paste.
		fmt.Fprintf(b, "  peer side (%s): udp=%s mapping-varies=%s portmap=%s home=%d latencies=%d endpoints=%v version=%q\n",
			s.Source, tri(s.ClientSupports.UDP), tri(s.MappingVariesByDestIP), tri(s.HavePortMap), s.HomeDERP, len(s.DERPLatencyMs), s.Endpoints, s.ClientVersion)
	}
	fmt.Fprintf(b, "  verdict: %s also %v\n", p.Verdict.Reason, p.Verdict.Also)
	// The links (issue 29) and the facts from prose, each a check.
	for _, c := range p.Verdict.Checks {
		f := string(c.Field)
		if strings.HasPrefix(f, "Link.") || strings.HasPrefix(f, "Log.") || f == "Ping.ICMP" || c.Source == "prose" || c.Source == probes.SourcePeerSnapshot {
			fmt.Fprintf(b, "    %s %s = %s (%s)\n", c.Mark(), c.Field, c.Value, c.Source)
		}
	}
}

func tri(b *bool) string {
	if b == nil {
		return "?"
	}
	return fmt.Sprint(*b)
}

func codeOf(c string) string {
	if c == "" {
		return ""
	}
	return fmt.Sprintf("(%q)", c)
}

// checkRedacted: the paste's redacted snapshot leaks nothing (Redact's
// own search) and gives us and every peer the same verdicts.
func checkRedacted(t *testing.T, f *snapshot.File, ls *join.Snapshot) {
	t.Helper()
	red, err := snapshot.Redact(f)
	if err != nil {
		t.Errorf("redact: %v", err)
		return
	}
	rls, err := roundTrip(t, red).Diagnose(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	reasons := func(s *join.Snapshot) []string {
		var out []string
		if v := s.Self.Verdict; v != nil {
			out = append(out, fmt.Sprintf("self %s %v", v.Reason, v.Also))
		}
		for _, p := range s.Peers {
			out = append(out, fmt.Sprintf("%s %s %v", p.Path.Kind, p.Verdict.Reason, p.Verdict.Also))
		}
		slices.Sort(out)
		return out
	}
	if diff := cmp.Diff(reasons(ls), reasons(rls)); diff != "" {
		t.Errorf("redacted verdicts differ (-pasted +redacted):\n%s", diff)
	}
}
