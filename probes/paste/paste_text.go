package paste

import (
	"bytes"
	"net/netip"
	"regexp"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// What forum software, terminals and shells do to the text people paste,
// undone before any format is read: UTF-16 files (PowerShell 5's `>`),
// typographic punctuation, non-breaking and zero-width spaces, tabs,
// Markdown quoting and code fences, shell prompts and `time` output.

// decodeText turns UTF-16 input (with a byte-order mark, or ASCII text with
// every other byte zero, as PowerShell 5's `tailscale status > out.txt`
// writes it) into UTF-8; other input is returned as it is.
func decodeText(b []byte) []byte {
	var le bool
	switch {
	case bytes.HasPrefix(b, []byte{0xff, 0xfe}):
		le, b = true, b[2:]
	case bytes.HasPrefix(b, []byte{0xfe, 0xff}):
		b = b[2:]
	case len(b) >= 8 && b[1] == 0 && b[3] == 0 && b[0] != 0 && b[2] != 0:
		le = true
	case len(b) >= 8 && b[0] == 0 && b[2] == 0 && b[1] != 0 && b[3] != 0:
	default:
		return b
	}
	u := make([]uint16, 0, len(b)/2)
	for i := 0; i+1 < len(b); i += 2 {
		if le {
			u = append(u, uint16(b[i])|uint16(b[i+1])<<8)
		} else {
			u = append(u, uint16(b[i])<<8|uint16(b[i+1]))
		}
	}
	return []byte(string(utf16.Decode(u)))
}

// looksBinary reports whether b is not text anyone pasted: NUL bytes, or
// more than one byte in ten that is invalid UTF-8 or a control character
// other than tab, CR, LF and ESC (terminal colours are text).
func looksBinary(b []byte) bool {
	if len(b) > 64<<10 {
		b = b[:64<<10]
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return true
	}
	bad, n := 0, 0
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		n++
		switch {
		case r == utf8.RuneError && size == 1:
			bad++
		case r < 0x20 && r != '\t' && r != '\n' && r != '\r' && r != 0x1b:
			bad++
		}
	}
	return n >= 16 && bad*10 > n
}

// punct maps typographic and invisible characters to what the CLI printed.
var punct = strings.NewReplacer(
	"\u201c", `"`, "\u201d", `"`, "\u201e", `"`, "\u201f", `"`, "\u2033", `"`, "\u00ab", `"`, "\u00bb", `"`,
	"\u2018", "'", "\u2019", "'", "\u201a", "'", "\u201b", "'", "\u2032", "'",
	"\u2013", "-", "\u2014", "-", "\u2012", "-", "\u2212", "-", "\u2010", "-", "\u2011", "-",
	"\u2026", "...",
	"\u00a0", " ", "\u2007", " ", "\u202f", " ", "\u2000", " ", "\u2001", " ", "\u2002", " ", "\u2003", " ",
	"\u2004", " ", "\u2005", " ", "\u2006", " ", "\u2008", " ", "\u2009", " ", "\u200a", " ", "\u3000", " ",
	"\u200b", "", "\u200c", "", "\u200d", "", "\u2060", "", "\ufeff", "", "\u00ad", "",
	"\t", " ",
)

// ansiRE matches terminal escape sequences (colours in copied logs).
var ansiRE = lazyRE(`\x1b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])`)

// normLine undoes what forums and terminals do to one line: typographic
// quotes and dashes, non-breaking and zero-width spaces, tabs, colour
// escapes, Markdown quote markers ("> ") and inline-code backticks around
// the whole line; runs of spaces become one. fence is true for a Markdown
// code fence line ("```", "```text"), which says nothing.
func normLine(s string) (line string, fence bool) {
	if strings.IndexByte(s, 0x1b) >= 0 {
		s = ansiRE().ReplaceAllString(s, "")
	}
	s = punct.Replace(s)
	s = strings.TrimSpace(s)
	for strings.HasPrefix(s, ">") && (len(s) == 1 || s[1] == ' ' || s[1] == '>') && !promptCmdRE().MatchString(s) {
		s = strings.TrimSpace(s[1:])
	}
	if strings.HasPrefix(s, "```") || strings.HasPrefix(s, "~~~") {
		return "", true
	}
	if len(s) > 2 && s[0] == '`' && s[len(s)-1] == '`' && strings.Count(s, "`") == 2 {
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	if strings.Contains(s, "  ") {
		s = strings.Join(strings.Fields(s), " ")
	}
	return s, false
}

// Shell prompts and the commands people run before pasting their output.
var (
	// promptRE is a shell prompt, at the start of a line: bash/sh
	// ("user@host:~$ ", "[user@host ~]# ", "$ ", "# "), zsh ("host% ",
	// "user@host dir % ", "~/src % ", "❯ "), PowerShell ("PS C:\Users\me> ")
	// and cmd.exe ("C:\>").
	promptRE = lazyRE(`^(?:\([\w.-]+\) )?(?:PS [^>]*> ?|[A-Za-z]:\\[^>]*> ?|\[[^\]]*\] ?[$#%>] |[\w.-]+@[\w.-]+:[^\s$#]*[$#] |(?:[\w.@-]+ )?[\w.@:~/+-]+ ?[$#%>❯➜] |[$#%>❯➜] )`)
	// promptCmdRE is a prompt (or none) running tailscale, tailscaled or a
	// command that shows their output (journalctl, docker, kubectl, ...).
	promptCmdRE = lazyRE(`^(?:(?:\([\w.-]+\) )?(?:PS [^>]*> ?|[A-Za-z]:\\[^>]*> ?|\[[^\]]*\] ?[$#%>] |[\w.-]+@[\w.-]+:[^\s$#]*[$#] |(?:[\w.@-]+ )?[\w.@:~/+-]+ ?[$#%>❯➜] |[$#%>❯➜] ))?(?:(?:sudo|doas|time|command|exec|nice) (?:-\S+ )*)*(?:\S*/)?(tailscaled?|tailscale\.exe|journalctl|docker|podman|kubectl|systemctl|cat|grep|less|tail|head|Get-Content|type|sudo)(?: |$)(.*)$`)
	// timeLineRE is what a shell's `time` prints after the command: bash
	// ("real 0m3.012s", "user …", "sys …"), zsh ("… 0.01s user 0.00s
	// system 0% cpu 9.123 total"), fish ("Executed in 10.05 secs …", "usr
	// time …", its rule line).
	timeLineRE = lazyRE(`^(?:(?:real|user|sys) \d+m[\d.]+s|.* [\d.]+s user [\d.]+s system \d+% cpu [\d.:]+ total|Executed in .*|(?:usr|sys) time .*|_{20,})$`)
)

// command is a shell command line naming what the output below it is.
type command struct {
	tool string   // "tailscale", "journalctl", ...
	args []string // the words after it, flags included
}

// parseCommand reads a (prompt and) command line; ok is false when the
// line is not one.
func parseCommand(s string) (command, bool) {
	if !mentionsTool(s) {
		return command{}, false
	}
	m := promptCmdRE().FindStringSubmatch(s)
	if m == nil {
		return command{}, false
	}
	tool := strings.TrimSuffix(m[1], ".exe")
	if tool == "sudo" {
		return command{}, false
	}
	args := strings.Fields(m[2])
	// Shell redirections and pipes end the command.
	for i, a := range args {
		if a == "|" || a == ">" || a == "2>&1" || a == "&&" || a == ";" || strings.HasPrefix(a, ">") {
			args = args[:i]
			break
		}
	}
	if tool != "tailscale" && tool != "tailscaled" {
		// Only a prompt makes another tool's line a command: a bare
		// "cat notes" is a sentence as often as not.
		if !promptRE().MatchString(s) {
			return command{}, false
		}
	}
	return command{tool: tool, args: args}, true
}

// cmdTools are the words promptCmdRE looks for: a line without any is no
// command (a cheap test before the expensive one).
var cmdTools = []string{"tailscale", "journalctl", "docker", "podman", "kubectl", "systemctl", "cat", "grep", "less", "tail", "head", "Get-Content", "type"}

func mentionsTool(s string) bool {
	for _, t := range cmdTools {
		for i := 0; i < len(s); {
			j := strings.Index(s[i:], t)
			if j < 0 {
				break
			}
			j += i
			if toolWordAt(s, j, len(t)) {
				return true
			}
			i = j + 1
		}
	}
	return false
}

// toolWordAt reports whether s[at:at+n] stands as promptCmdRE's tool
// does: after the line's start, a space, a path's "/" or a prompt's ">",
// and before a space, the line's end, "d" (tailscaled) or ".exe". A
// journal's "tailscaled[1160]:" and docker's "tailscale-1 |" are not, so
// the pattern is not run over every log line.
func toolWordAt(s string, at, n int) bool {
	if at > 0 {
		switch s[at-1] {
		case ' ', '\t', '/', '>':
		default:
			return false
		}
	}
	end := at + n
	if end < len(s) && s[end] == 'd' {
		end++
	}
	if strings.HasPrefix(s[end:], ".exe") {
		end += 4
	}
	return end == len(s) || s[end] == ' ' || s[end] == '\t'
}

// sub is a tailscale command's subcommand and its first non-flag
// argument ("ping", "nas"); for `tailscale ping -c 5 --tsmp nas` also its
// flags.
func (c command) sub() (sub, target string, flags []string) {
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		switch {
		case strings.HasPrefix(a, "-"):
			f := strings.TrimLeft(a, "-")
			flags = append(flags, f)
			// The CLI's flags that take a value (ping -c 5, --size, --timeout,
			// netcheck --every, --format) take the next word unless "=" joins it.
			if name, _, joined := strings.Cut(f, "="); !joined && valueFlags[name] && i+1 < len(c.args) {
				i++
			}
		case sub == "":
			sub = a
		case target == "":
			target = a
		}
	}
	return sub, target, flags
}

// valueFlags are the tailscale CLI flags (ping, netcheck, status) that
// take a value.
var valueFlags = map[string]bool{"c": true, "size": true, "timeout": true, "every": true, "format": true, "listen": true, "bind-address": true, "bind-port": true}

// isBarePrompt reports whether s is a shell prompt with nothing typed
// after it (the last line of a copied terminal).
func isBarePrompt(s string) bool {
	if len(s) == 0 || len(s) > 120 || !strings.ContainsAny(s[len(s)-1:], "$#%>") && !strings.HasSuffix(s, "❯") && !strings.HasSuffix(s, "➜") {
		return false
	}
	loc := promptRE().FindStringIndex(s + " ")
	return loc != nil && loc[1] >= len(s)
}

// Placeholders and redactions people put where an address, a name or a
// region was. They are unknown values: never a name, an id or a region,
// never a reason to drop the line.
var (
	// redactedRE is a redaction token: [redacted], <redacted>, (hidden),
	// REDACTED, ***, xxx, <ip>, <server-public-ip>:<port>, ....
	redactedRE = lazyRE(`(?i)^(?:[\[<({]\s*[^\]>)}]*[\]>)}]|\*{2,}|x{2,}|\.{3,}|redacted|removed|hidden|censored|snip|anonymi[sz]ed|omitted)$`)
	// addrLikeRE is a dotted or coloned address with some parts replaced
	// (x.y.z.w, 100.xxx.xxx.xxx, TAILNET.IP.MACHINE.2, 203.0.xx.xx,
	// fd7a:115c:a1e0::xxxx), with an optional port or placeholder port.
	addrLikeRE = lazyRE(`^(?:[\w*?-]+(?:\.[\w*?-]+){3}|[0-9a-fA-FxX*?]{0,4}(?::[0-9a-fA-FxX*?]{0,4}){2,7}|\[[^\]]*\])(?::(?:\d+|[\w*?<>-]+))?$`)
)

// isRedacted reports whether s (a whole token, brackets included) is a
// redaction or placeholder rather than a value.
func isRedacted(s string) bool {
	s = strings.Trim(s, `"'`)
	if s == "" {
		return false
	}
	if redactedRE().MatchString(s) {
		return true
	}
	low := strings.ToLower(s)
	return strings.Contains(low, "redact") || strings.Contains(low, "<") || strings.Contains(low, "xxx") || strings.Contains(s, "***")
}

// parseAddrOrPlaceholder reads an address in a place where the CLI prints
// one: ok with a valid a, or ok with an invalid a for a placeholder
// (unknown address); !ok for anything else.
func parseAddrOrPlaceholder(s string) (a netip.Addr, ok bool) {
	if a, err := netip.ParseAddr(s); err == nil {
		return a, true
	}
	if isRedacted(s) || (addrLikeRE().MatchString(s) && !isPlainNumber(s)) {
		return netip.Addr{}, true
	}
	return netip.Addr{}, false
}

// parseAddrPortOrPlaceholder is parseAddrOrPlaceholder for "ip:port".
func parseAddrPortOrPlaceholder(s string) (ap netip.AddrPort, ok bool) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap, true
	}
	if isRedacted(s) || addrLikeRE().MatchString(s) {
		return netip.AddrPort{}, true
	}
	return netip.AddrPort{}, false
}

func isPlainNumber(s string) bool {
	for _, c := range s {
		if (c < '0' || c > '9') && c != '.' {
			return false
		}
	}
	return true
}

// knownName is s as a name (of a host, a region), or "" when s is a
// placeholder or redaction.
func knownName(s string) string {
	if isRedacted(s) {
		return ""
	}
	return s
}

// isTimeLine reports a shell `time` output line (timeLineRE), cheaply
// ruling most lines out first.
func isTimeLine(s string) bool {
	switch {
	case strings.HasPrefix(s, "real "), strings.HasPrefix(s, "user "), strings.HasPrefix(s, "sys "),
		strings.HasSuffix(s, " total"), strings.HasPrefix(s, "Executed in"), strings.HasPrefix(s, "usr time"),
		strings.HasPrefix(s, "sys time"), strings.HasPrefix(s, "____"):
		return timeLineRE().MatchString(s)
	}
	return false
}

// lazyRE is a regular expression compiled when it is first used, not at
// start-up: the readers' ~80 patterns cost ~5 ms and 1 MB of every run's
// package init (GODEBUG=inittrace=1), most of which never reads a paste.
// Every one made is listed in lazyREs, which a test compiles.
func lazyRE(expr string) func() *regexp.Regexp {
	lazyREs = append(lazyREs, expr)
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// lazyREs are the patterns lazyRE was given.
var lazyREs []string
