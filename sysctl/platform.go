package sysctl

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tailpath/tailpath/internal/safetext"
)

// PlatformKind is a stable id for the system tailpath runs on; it decides
// where --persist keeps the values and what BBR advice fits.
type PlatformKind string

const (
	// PlatformDSM is Synology DSM (/etc.defaults/VERSION). Persistence: an
	// executable script in /usr/local/etc/rc.d, which DSM runs with "start"
	// at boot and keeps across updates.
	PlatformDSM PlatformKind = "synology-dsm"
	// PlatformUnraid is Unraid (/etc/unraid-version). The root filesystem
	// lives in RAM; persistence is a marked block in /boot/config/go.
	PlatformUnraid PlatformKind = "unraid"
	// PlatformTrueNAS is TrueNAS SCALE (/etc/version beside the middleware's
	// database or midclt). Sysctls live in its configuration database
	// (tunables); files under /etc are regenerated.
	PlatformTrueNAS PlatformKind = "truenas-scale"
	// PlatformQNAP is QNAP QTS/QuTS hero (/etc/config/uLinux.conf): no boot
	// hook tailpath may use, so persistence is printed steps.
	PlatformQNAP PlatformKind = "qnap"
	// PlatformOMV is openmediavault (/etc/openmediavault): Debian with
	// systemd-sysctl, so /etc/sysctl.d.
	PlatformOMV PlatformKind = "openmediavault"
	// PlatformOpenWrt is OpenWrt (/etc/openwrt_release): procd's sysctl
	// service applies /etc/sysctl.d at boot.
	PlatformOpenWrt PlatformKind = "openwrt"
	// PlatformUniFi is UniFi OS on a Ubiquiti console or gateway
	// (/usr/lib/version, or ubnt-device-info): Debian underneath, but its
	// firmware updates replace the root filesystem; /data survives.
	PlatformUniFi PlatformKind = "unifi-os"
	// PlatformEdgeOS is Ubiquiti's EdgeOS on an EdgeRouter
	// (/opt/vyatta/etc/version): Vyatta on Debian, whose apt must not
	// upgrade the system; /config survives firmware upgrades.
	PlatformEdgeOS PlatformKind = "edgeos"
	// PlatformHAOS is Home Assistant OS (/etc/os-release ID=haos): a
	// read-only appliance OS with no package manager for the host.
	PlatformHAOS PlatformKind = "haos"
	// PlatformSystemd is any other Linux booted with systemd: systemd-sysctl
	// applies /etc/sysctl.d at boot.
	PlatformSystemd PlatformKind = "systemd"
	// PlatformUnknown is a Linux whose boot-time sysctl mechanism tailpath
	// does not know: persistence is printed steps, nothing is written.
	PlatformUnknown PlatformKind = "unknown"
)

// Platform is the detected system.
type Platform struct {
	Kind PlatformKind `json:"kind"`
	// Name is the system with its version as its owners call it:
	// "Synology DSM 7.1.1-42962 Update 6", "Unraid 6.12.10".
	Name string `json:"name"`
	// Version is the product version alone ("7.1.1", "6.12.10"); empty when unknown.
	Version string `json:"version,omitempty"`
	// Evidence is the file that identified the system, as an absolute path
	// on that system ("/etc.defaults/VERSION"); empty for PlatformUnknown.
	Evidence string `json:"evidence,omitempty"`
}

// maxIdentityFile bounds how much of an identity file is read.
const maxIdentityFile = 64 << 10

// root is the directory treated as "/" ("/" when Root is empty).
func (h Host) root() string {
	if h.Root == "" {
		return "/"
	}
	return h.Root
}

// At returns the path of the absolute system path p under the host's root.
func (h Host) At(p string) string { return filepath.Join(h.root(), filepath.FromSlash(p)) }

// ReadIdentity reads at most maxIdentityFile bytes of the system file p
// (a regular file only), as Platform does; sysctltest copies a host's
// identity files with it.
func (h Host) ReadIdentity(p string) ([]byte, error) {
	f, err := os.Open(h.At(p))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	return io.ReadAll(io.LimitReader(f, maxIdentityFile))
}

func (h Host) exists(p string) bool {
	_, err := os.Stat(h.At(p))
	return err == nil
}

// Platform detects the system from the files that identify it, in this
// order: Synology DSM, Unraid, TrueNAS SCALE, QNAP, openmediavault,
// OpenWrt, UniFi OS, EdgeOS, Home Assistant OS, systemd, else
// PlatformUnknown. It never fails: unreadable files
// count as absent. Text taken from the files is cleaned of control
// characters and cut to 64 characters.
//
// Long on purpose: a table: one short check per platform's marker file, tried
// in order.
func (h Host) Platform() Platform {
	if b, err := h.ReadIdentity("/etc.defaults/VERSION"); err == nil {
		if p, ok := parseDSMVersion(b); ok {
			p.Evidence = "/etc.defaults/VERSION"
			return p
		}
	}
	if b, err := h.ReadIdentity("/etc/unraid-version"); err == nil {
		p := Platform{Kind: PlatformUnraid, Name: "Unraid", Evidence: "/etc/unraid-version"}
		if v := cleanField(ParseShellVars(b)["version"]); v != "" {
			p.Version, p.Name = v, "Unraid "+v
		}
		return p
	}
	for _, marker := range []string{"/data/freenas-v1.db", "/usr/bin/midclt"} {
		if !h.exists(marker) {
			continue
		}
		p := Platform{Kind: PlatformTrueNAS, Name: "TrueNAS SCALE", Evidence: marker}
		if b, err := h.ReadIdentity("/etc/version"); err == nil {
			if v := cleanField(firstLine(b)); v != "" {
				p.Version, p.Name, p.Evidence = v, "TrueNAS SCALE "+v, "/etc/version"
			}
		}
		return p
	}
	if b, err := h.ReadIdentity("/etc/config/uLinux.conf"); err == nil {
		p := Platform{Kind: PlatformQNAP, Name: "QNAP QTS", Evidence: "/etc/config/uLinux.conf"}
		sys := ParseINISection(b, "System")
		if v := cleanField(sys["Version"]); v != "" {
			p.Version, p.Name = v, "QNAP QTS "+v
			if n := cleanField(sys["Build Number"]); n != "" {
				p.Name += " (build " + n + ")"
			}
		}
		return p
	}
	if fi, err := os.Stat(h.At("/etc/openmediavault")); err == nil && fi.IsDir() {
		p := Platform{Kind: PlatformOMV, Name: "openmediavault", Evidence: "/etc/openmediavault"}
		if d := h.osRelease(); d != "" {
			p.Name += " on " + d
		}
		return p
	}
	if b, err := h.ReadIdentity("/etc/openwrt_release"); err == nil {
		v := ParseShellVars(b)
		p := Platform{Kind: PlatformOpenWrt, Name: "OpenWrt", Evidence: "/etc/openwrt_release", Version: cleanField(v["DISTRIB_RELEASE"])}
		if d := cleanField(v["DISTRIB_DESCRIPTION"]); d != "" {
			p.Name = d
		} else if p.Version != "" {
			p.Name = "OpenWrt " + p.Version
		}
		return p
	}
	// UniFi OS: /usr/lib/version holds the product, SoC and version
	// ("UCKP.apq8053.v3.0.17.8102bbc.230210.1526"); consoles of UniFi OS 2
	// and later have ubnt-device-info (SierraSoftworks/tailscale-unifi's
	// install.sh reads both).
	if b, err := h.ReadIdentity("/usr/lib/version"); err == nil {
		if v := cleanField(firstLine(b)); v != "" {
			p := Platform{Kind: PlatformUniFi, Name: "UniFi OS", Evidence: "/usr/lib/version"}
			if product, rest, ok := strings.Cut(v, "."); ok {
				if _, ver, ok := strings.Cut(rest, ".v"); ok {
					f := strings.Split(ver, ".")
					n := 0
					for n < len(f) && n < 3 && f[n] != "" && strings.Trim(f[n], "0123456789") == "" {
						n++
					}
					if n > 0 {
						p.Version = strings.Join(f[:n], ".")
						p.Name = "UniFi OS " + p.Version + " (" + product + ")"
					}
				}
			}
			return p
		}
	}
	if h.exists("/usr/bin/ubnt-device-info") {
		return Platform{Kind: PlatformUniFi, Name: "UniFi OS", Evidence: "/usr/bin/ubnt-device-info"}
	}
	if b, err := h.ReadIdentity("/opt/vyatta/etc/version"); err == nil {
		p := Platform{Kind: PlatformEdgeOS, Name: "EdgeOS", Evidence: "/opt/vyatta/etc/version"}
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "Version" {
				if v := cleanField(v); v != "" {
					p.Version = strings.TrimPrefix(v, "v")
					p.Name = "EdgeOS " + v
				}
			}
		}
		return p
	}
	for _, rel := range []string{"/etc/os-release", "/usr/lib/os-release"} {
		b, err := h.ReadIdentity(rel)
		if err != nil {
			continue
		}
		v := ParseShellVars(b)
		if v["ID"] == "haos" {
			p := Platform{Kind: PlatformHAOS, Name: "Home Assistant OS", Evidence: rel, Version: cleanField(v["VERSION_ID"])}
			if n := cleanField(v["PRETTY_NAME"]); n != "" {
				p.Name = n
			}
			return p
		}
		break
	}
	for _, marker := range []string{"/run/systemd/system", "/usr/lib/systemd/systemd-sysctl", "/lib/systemd/systemd-sysctl"} {
		if h.exists(marker) {
			p := Platform{Kind: PlatformSystemd, Name: "Linux with systemd", Evidence: marker}
			if d := h.osRelease(); d != "" {
				p.Name = d + " (systemd)"
			}
			return p
		}
	}
	p := Platform{Kind: PlatformUnknown, Name: "unknown Linux"}
	if d := h.osRelease(); d != "" {
		p.Name = d
	}
	return p
}

// osRelease returns PRETTY_NAME from /etc/os-release or /usr/lib/os-release.
func (h Host) osRelease() string {
	for _, p := range []string{"/etc/os-release", "/usr/lib/os-release"} {
		if b, err := h.ReadIdentity(p); err == nil {
			if n := cleanField(ParseShellVars(b)["PRETTY_NAME"]); n != "" {
				return n
			}
		}
	}
	return ""
}

// parseDSMVersion reads /etc.defaults/VERSION: productversion (DSM 6+),
// buildnumber and smallfixnumber; os_name (DSM 7) when present must be DSM
// (SRM, Synology's router system, shares the format).
func parseDSMVersion(b []byte) (Platform, bool) {
	v := ParseShellVars(b)
	if n, ok := v["os_name"]; ok && n != "DSM" {
		return Platform{}, false
	}
	ver := cleanField(v["productversion"])
	if ver == "" {
		major, minor := cleanField(v["majorversion"]), cleanField(v["minorversion"])
		if major == "" {
			return Platform{}, false
		}
		ver = major
		if minor != "" {
			ver += "." + minor
		}
	}
	name := "Synology DSM " + ver
	if bn := cleanField(v["buildnumber"]); bn != "" {
		name += "-" + bn
	}
	if fix := cleanField(v["smallfixnumber"]); fix != "" && fix != "0" {
		name += " Update " + fix
	}
	return Platform{Kind: PlatformDSM, Name: name, Version: ver}, true
}

// ParseShellVars parses shell-style assignments (KEY="value", KEY='value',
// KEY=value), one per line, as /etc.defaults/VERSION, /etc/unraid-version,
// /etc/os-release and /etc/openwrt_release hold them. Comments, blank lines
// and lines without '=' are skipped; a later key wins. Values are returned
// raw (unquoted, not cleaned).
func ParseShellVars(b []byte) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 4096), maxIdentityFile)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, ok := strings.Cut(line, "=")
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			continue
		}
		out[k] = unquote(strings.TrimSpace(v))
	}
	return out
}

// unquote strips one pair of matching single or double quotes.
func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}

// ParseINISection returns the "key = value" pairs of [section] in an
// INI-style file such as QNAP's /etc/config/uLinux.conf. Keys keep their
// inner spaces ("Build Number"); values are trimmed and unquoted.
func ParseINISection(b []byte, section string) map[string]string {
	out := map[string]string{}
	in := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 4096), maxIdentityFile)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			in = strings.EqualFold(strings.TrimSpace(line[1:len(line)-1]), section)
			continue
		}
		if !in || line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		out[strings.TrimSpace(k)] = unquote(strings.TrimSpace(v))
	}
	return out
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(s)
}

// cleanField makes a value from an identity file safe to print: control
// characters and escapes removed, at most 64 runes.
func cleanField(s string) string {
	s = strings.TrimSpace(safetext.Clean(s))
	if r := []rune(s); len(r) > 64 {
		s = string(r[:64])
	}
	return s
}
