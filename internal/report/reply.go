package report

import (
	"io"
	"strconv"
	"strings"

	"github.com/tailpath/tailpath/probes"
	"github.com/tailpath/tailpath/probes/join"
)

// maxReplyPeers is how many peers a reply describes (the relayed and the
// open ones first, in the table's order); the rest are counted.
const maxReplyPeers = 8

// WriteReply writes `status --from … --reply`: a Markdown reply for the
// thread the input was pasted from. It says what the paste shows (this
// node's verdict, each relayed or open peer's path and reason), what is
// still open (the reasons each open verdict could still be), and at most
// MaxSettleSteps commands to run and paste back, each on its end, most
// deciding first. s must already be redacted (the caller redacts as
// --redact does): every name and address in it is written as it is.
func WriteReply(w io.Writer, s *join.Snapshot) error {
	var b strings.Builder
	b.WriteString("**What your paste shows**\n\n")
	if v := s.Self.Verdict; v != nil {
		b.WriteString("- this node (" + md(string(s.Self.Name)) + "): `" + string(v.Reason) + "`: " + md(string(v.Summary)) + "\n")
	}
	var shown, rest int
	for i := range s.Peers {
		p := &s.Peers[i]
		if p.Path.Kind != probes.PathDERP && p.Path.Kind != probes.PathPeerRelay && p.Path.Kind != probes.PathUnknown && p.Verdict.Settle == nil {
			continue
		}
		if shown == maxReplyPeers {
			rest++
			continue
		}
		shown++
		b.WriteString("- " + md(string(p.Name)) + osOf(p) + ": " + md(string(p.Path.Text)) + "; `" + string(p.Verdict.Reason) + "`: " + md(string(p.Verdict.Summary)) + "\n")
	}
	if rest > 0 {
		b.WriteString("- and " + strconv.Itoa(rest) + " more peers like these\n")
	}
	if shown == 0 && s.Self.Verdict == nil {
		b.WriteString("- no relayed peer and nothing wrong at this end\n")
	}

	var open []string
	if st := s.Self.Settle; st != nil {
		open = append(open, "- this node: could still be "+candidates(st))
	}
	for i := range s.Peers {
		if st := s.Peers[i].Verdict.Settle; st != nil && len(open) < maxReplyPeers {
			open = append(open, "- "+md(string(s.Peers[i].Name))+": could still be "+candidates(st))
		}
	}
	steps := probes.StepsOf(s.Snapshot, probes.StepOptions{Mode: probes.ModePasted}, MaxSettleSteps)
	if len(open) > 0 {
		b.WriteString("\n**Still open**\n\n" + strings.Join(open, "\n") + "\n")
	}
	if len(steps) > 0 {
		b.WriteString("\n**Could you run these and paste the output back?** (most telling first)\n\n")
		for i, st := range steps {
			on := md(string(st.On))
			if st.End == probes.EndSelf {
				on = "the machine whose output you pasted"
			}
			b.WriteString(strconv.Itoa(i+1) + ". On " + on)
			if st.Platform != "" && st.Platform != probes.PlatformUnknown {
				b.WriteString(" (" + string(st.Platform) + ")")
			}
			b.WriteString(": it decides between " + ReasonList(st.Decides, 4) + ".\n")
			b.WriteString("   ```\n   " + string(st.Command) + "\n   ```\n")
			for _, o := range st.Others {
				b.WriteString("   " + platformWords(o.Platform) + " instead: `" + string(o.Command) + "`\n")
			}
			if st.Note != "" {
				b.WriteString("   (" + md(st.Note) + ")\n")
			}
		}
	} else if len(open) > 0 {
		b.WriteString("\nNothing the CLI prints would settle the rest from here.\n")
	}
	b.WriteString("\n<sub>Written with tailpath from the pasted output; names, addresses and keys are replaced.</sub>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// candidates names an open verdict's candidates, the one that holds so
// far first.
func candidates(st *probes.Settle) string {
	var rs []probes.ReasonID
	held := ""
	for _, c := range st.Candidates {
		if c.Holds {
			held = " (`" + string(c.Reason) + "` holds on what is shown)"
			continue
		}
		rs = append(rs, c.Reason)
	}
	var parts []string
	for i, r := range rs {
		if i == 6 {
			parts = append(parts, "and "+strconv.Itoa(len(rs)-6)+" more")
			break
		}
		parts = append(parts, "`"+string(r)+"`")
	}
	return strings.Join(parts, ", ") + held
}

func osOf(p *probes.Peer) string {
	if p.OS == "" {
		return ""
	}
	return " (" + md(string(p.OS)) + ")"
}

func platformWords(p probes.Platform) string {
	switch p {
	case probes.PlatformSynology:
		return "On a Synology"
	case probes.PlatformContainer:
		return "In a container"
	}
	return "On " + string(p)
}

// md makes s inert in Markdown: no code spans, links, emphasis, HTML or
// line breaks from the input (its text is already safe for a terminal).
func md(s string) string {
	var b strings.Builder
	for _, c := range s {
		switch c {
		case '`', '*', '_', '[', ']', '<', '>', '|', '\\', '#', '!':
			b.WriteByte('\\')
			b.WriteRune(c)
		case '\n', '\r':
			b.WriteByte(' ')
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}
