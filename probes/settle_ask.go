package probes

import (
	"strings"
	"sync"

	"github.com/tailpath/tailpath/internal/safetext"
)

// The command that reveals each fact (SettleFact), exact and per
// platform, and how its output joins the evidence. Every command asked
// for is one whose output tailpath's pasted-text readers read (Readers:
// probes/paste's input kinds; TestAsksReadable, probes/asks_readable_test.go,
// fails for a reader probes/paste does not have).
// A fact no readable command reveals on a platform has no Ask there
// (Decider.NoAsk says why): Android and iOS have no tailscale CLI, and
// tailscaled's log is asked for only where its place is known.
//
// Where the CLI and the log live (Tailscale v1.102.5):
//   - Linux: `tailscale` on the PATH; tailscaled runs as the systemd unit
//     tailscaled (cmd/tailscaled/tailscaled.service), its log in the
//     journal; [v1] lines are not (logtail writes a line to stderr only at
//     or below its verbosity: logtail.go Write, parseAndRemoveLogLevel), so
//     the log asked for is the level-0 "control: NetInfo: NetInfo{…}"
//     (control/controlclient/direct.go SetNetInfo, on every change) and
//     "magicsock: endpoints changed: …" (wgengine/magicsock).
//   - macOS, the standalone and App Store apps: the GUI's CLI,
//     /Applications/Tailscale.app/Contents/MacOS/Tailscale (Tailscale's KB
//     1080, and the wiki page "Tailscaled on macOS": "that's the path to
//     the GUI's CLI"); its tailscaled logs to the system log, which no
//     reader reads: no log is asked for.
//   - Windows: tailscale.exe on the PATH (C:\Program Files\Tailscale);
//     tailscaled.exe as the service writes its log to
//     %ProgramData%\Tailscale\Logs\tailscale-service-<time>.txt
//     (log/filelogger New, startNewFileLocked; logpolicy.go), one file a
//     day, every line (no verbosity filter), read in an elevated
//     PowerShell.
//   - Synology: /var/packages/Tailscale/target/bin/tailscale (the
//     package's CLI: `… configure-host`, Tailscale's KB 1131).
//   - A container: `docker exec NAME tailscale …`; tailscaled's log is the
//     container's output (`docker logs`).
//   - Android and iOS: no CLI; the control API (a read-only key) has
//     their NAT facts.

// Platform is where a command runs.
type Platform string

const (
	PlatformLinux     Platform = "linux"
	PlatformMacOS     Platform = "macos"
	PlatformWindows   Platform = "windows"
	PlatformSynology  Platform = "synology"
	PlatformContainer Platform = "container"
	PlatformAndroid   Platform = "android"
	PlatformIOS       Platform = "ios"
	// PlatformUnknown: the OS is not known; the commands every CLI
	// shares (tailscale status, netcheck, ping, version) are asked for.
	PlatformUnknown Platform = "unknown"
	// PlatformOther: an OS tailpath knows no tailscale CLI for (a
	// FreeRTOS microcontroller, Plan 9): nothing is asked of it.
	PlatformOther Platform = "other"
)

// PlatformOf is the platform of a Hostinfo.OS value ("linux", "macOS",
// "windows", "android", "iOS", …; "" unknown; an OS with no known
// tailscale CLI, PlatformOther).
func PlatformOf(os string) Platform {
	switch strings.ToLower(os) {
	case "":
		return PlatformUnknown
	case "linux", "freebsd", "openbsd", "illumos", "solaris":
		return PlatformLinux
	case "macos", "darwin":
		return PlatformMacOS
	case "windows":
		return PlatformWindows
	case "android":
		return PlatformAndroid
	case "ios", "tvos":
		return PlatformIOS
	}
	return PlatformOther
}

// Readers of pasted output a command's answer is read with: the input
// kinds of probes/paste (KindStatusText, …), which TestAsksReadable
// holds these to.
const (
	ReaderStatusText   = "tailscale status"
	ReaderStatusJSON   = "tailscale status --json"
	ReaderNetcheckText = "tailscale netcheck"
	ReaderPing         = "tailscale ping"
	ReaderLog          = "tailscaled log"
	ReaderVersion      = "tailscale version"
)

// How a command's output joins the evidence (Ask.Apply).
const (
	// ApplyAppend: this end's output, added to the same input
	// (`tailpath status --from thread.txt reply.txt`).
	ApplyAppend = "append"
	// ApplyPeerSnapshot: the peer's output, whose `tailscale status`
	// names the node, read as the peer's side
	// (`tailpath status --from thread.txt --peer-snapshot reply.txt`).
	ApplyPeerSnapshot = "peer-snapshot"
)

// Ask is one command that reveals a fact.
type Ask struct {
	Platform Platform `json:"platform"`
	// Command is what to run, ready to paste into that platform's shell
	// (PowerShell on Windows).
	Command safetext.Text `json:"command"`
	// Readers are the pasted formats tailpath reads its output with.
	Readers []string `json:"readers"`
	// Apply is how its output joins the evidence: ApplyAppend or
	// ApplyPeerSnapshot.
	Apply string `json:"apply"`
	// Note says what to know before running it ("" none).
	Note string `json:"note,omitempty"`
}

// cliOf is the tailscale CLI as a command word on p; "" where there is
// none.
func cliOf(p Platform) string {
	switch p {
	case PlatformMacOS:
		return "/Applications/Tailscale.app/Contents/MacOS/Tailscale"
	case PlatformSynology:
		return "/var/packages/Tailscale/target/bin/tailscale"
	case PlatformContainer:
		return "docker exec CONTAINER tailscale"
	case PlatformAndroid, PlatformIOS, PlatformOther:
		return ""
	}
	return "tailscale"
}

// logOf is the command that prints tailscaled's newest NetInfo and
// endpoint lines on p; "" where tailscaled's log is not read.
func logOf(p Platform) string {
	const netinfo, eps = "'NetInfo{'", "'endpoints changed'"
	switch p {
	case PlatformLinux:
		j := "sudo journalctl -u tailscaled --no-pager | grep -F "
		return j + netinfo + " | tail -n 3; " + j + eps + " | tail -n 3"
	case PlatformContainer:
		j := "docker logs CONTAINER 2>&1 | grep -F "
		return j + netinfo + " | tail -n 3; " + j + eps + " | tail -n 3"
	case PlatformWindows:
		return `Get-ChildItem "$env:ProgramData\Tailscale\Logs\tailscale-service-*.txt" | Sort-Object LastWriteTime | Select-Object -Last 2 | Get-Content | Select-String -SimpleMatch -Pattern 'NetInfo{','endpoints changed' | Select-Object -Last 6 | ForEach-Object Line`
	}
	return ""
}

// notes are what to know before running a platform's commands.
func platformNote(p Platform, withLog bool) string {
	switch p {
	case PlatformContainer:
		return "CONTAINER is the name of the container tailscaled runs in (docker ps)"
	case PlatformWindows:
		if withLog {
			return "in PowerShell run as administrator (tailscaled's log is readable by administrators only)"
		}
		return "in PowerShell"
	case PlatformMacOS:
		return "with the open-source tailscaled (Homebrew), `tailscale` instead of the app's path"
	case PlatformUnknown:
		return "on macOS the app's CLI is /Applications/Tailscale.app/Contents/MacOS/Tailscale"
	}
	return ""
}

// askFor is the command that reveals fact f on platform p (target names
// the peer for a ping), the same on the platforms a Linux machine may
// also be (Synology, a container), or why there is none.
func askFor(f SettleFact, p Platform, target safetext.Text) (ask *Ask, others []Ask, noAsk string) {
	fi, pi := settleOrder(f), platformIndex(p)
	if fi >= len(settleFacts) || pi < 0 {
		return askFresh(f, p, target)
	}
	a := &askTable()[fi][pi]
	if f != SettleDISCORun {
		// The same command for every peer of a platform, shared (an Ask
		// is read-only once made).
		return a.ask, a.others, a.noAsk
	}
	return askPing(a, p, target)
}

// askPing is askFor's DISCO run: the platform's command (tmpl, made for
// pingPlaceholder) with the peer's name put in, the one command that
// names the peer.
func askPing(tmpl *askAnswer, p Platform, target safetext.Text) (ask *Ask, others []Ask, noAsk string) {
	if tmpl.ask == nil {
		return nil, nil, tmpl.noAsk
	}
	if target == "" {
		_, why := askOn(SettleDISCORun, p, "")
		return nil, nil, why
	}
	// The Asks in one allocation, their commands in another: each
	// command is the template's with the placeholder cut, then target,
	// all in one string sliced up. Both halves are clean Text, so their
	// concatenation is too (New, which finds nothing to clean, makes it
	// Text; when it would change it, each command is made on its own).
	asks := make([]Ask, 1+len(tmpl.others))
	asks[0] = *tmpl.ask
	copy(asks[1:], tmpl.others)
	var b strings.Builder
	b.Grow(len(asks) * (len(tmpl.ask.Command) + len(target)))
	for i := range asks {
		b.WriteString(string(asks[i].Command[:len(asks[i].Command)-len(pingPlaceholder)]))
		b.WriteString(string(target))
	}
	all := safetext.New(b.String())
	for i := range asks {
		head := asks[i].Command[:len(asks[i].Command)-len(pingPlaceholder)]
		if l := len(head) + len(target); len(all) >= l && all[:len(head)] == head && all[len(head):l] == target {
			asks[i].Command, all = all[:l], all[l:]
		} else {
			asks[i].Command = head + target
		}
	}
	if len(asks) > 1 {
		others = asks[1:]
	}
	return &asks[0], others, ""
}

// pingPlaceholder stands for the peer's name in askTable's DISCO runs.
const pingPlaceholder = "PEER"

// allPlatforms are the platforms askTable holds, in its order.
var allPlatforms = [...]Platform{PlatformLinux, PlatformMacOS, PlatformWindows, PlatformSynology, PlatformContainer, PlatformAndroid, PlatformIOS, PlatformOther, PlatformUnknown}

// platformIndex is p's place in allPlatforms; -1 for none.
func platformIndex(p Platform) int {
	for i, q := range allPlatforms {
		if q == p {
			return i
		}
	}
	return -1
}

// askAnswer is askFor's answer for one fact on one platform (for the
// DISCO run, with pingPlaceholder as the peer).
type askAnswer struct {
	ask    *Ask
	others []Ask
	noAsk  string
}

// askTable is every fact's answer on every platform, by settleFacts' and
// allPlatforms' order: worked out once per process, since a gather of
// thousands of open verdicts asks the same few.
var askTable = sync.OnceValue(func() *[8][len(allPlatforms)]askAnswer {
	var t [8][len(allPlatforms)]askAnswer
	for fi, sf := range settleFacts {
		for pi, p := range allPlatforms {
			a, o, why := askFresh(sf.fact, p, pingPlaceholder)
			t[fi][pi] = askAnswer{a, o, why}
		}
	}
	return &t
})

// askFresh is askFor without the cache.
func askFresh(f SettleFact, p Platform, target safetext.Text) (ask *Ask, others []Ask, noAsk string) {
	a, why := askOn(f, p, target)
	if a == nil {
		return nil, nil, why
	}
	if p == PlatformLinux {
		for _, q := range []Platform{PlatformSynology, PlatformContainer} {
			if o, _ := askOn(f, q, target); o != nil {
				others = append(others, *o)
			}
		}
	}
	return a, others, ""
}

// askOn is askFor's command on one platform.
func askOn(f SettleFact, p Platform, target safetext.Text) (*Ask, string) {
	cli := cliOf(p)
	if cli == "" {
		if p == PlatformOther {
			return nil, "no tailscale CLI tailpath knows of on this OS"
		}
		switch f {
		case SettlePeerSide:
			return nil, "no tailscale CLI on " + string(p) + ": the control API (a read-only key, TAILSCALE_API_KEY with devices:core:read) reads its NAT facts"
		}
		return nil, "no tailscale CLI on " + string(p)
	}
	log := logOf(p)
	join := func(parts ...string) string {
		var out []string
		for _, s := range parts {
			if s != "" {
				out = append(out, s)
			}
		}
		return strings.Join(out, "; ")
	}
	a := &Ask{Platform: p, Apply: ApplyAppend}
	switch f {
	case SettleDISCORun:
		if target == "" {
			return nil, "the peer has no name or address in the input to ping"
		}
		a.Command, a.Readers = safetext.New(cli+" ping "+string(target)), []string{ReaderPing}
	case SettleSession:
		a.Command, a.Readers = safetext.New(cli+" status --json"), []string{ReaderStatusJSON}
	case SettleSelfVersion:
		a.Command, a.Readers = safetext.New(cli+" version"), []string{ReaderVersion}
	case SettleSelfNAT:
		a.Command = safetext.New(join(cli+" netcheck", log))
		a.Readers = []string{ReaderNetcheckText}
		if log != "" {
			a.Readers = append(a.Readers, ReaderLog)
		}
	case SettlePeerSide:
		a.Command = safetext.New(join(cli+" status", cli+" version", cli+" netcheck", log))
		a.Readers = []string{ReaderStatusText, ReaderVersion, ReaderNetcheckText}
		if log != "" {
			a.Readers = append(a.Readers, ReaderLog)
		}
		a.Apply = ApplyPeerSnapshot
	default:
		return nil, "no command whose output tailpath reads shows it yet"
	}
	a.Note = platformNote(p, log != "" && (f == SettleSelfNAT || f == SettlePeerSide))
	return a, ""
}
