package paste

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tailscale/hujson"
	"go.yaml.in/yaml/v3"
	"tailscale.com/ipn/ipnstate"
	"tailscale.com/tailcfg"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/internal/tscompat"
	"github.com/tailpath/tailpath/probes/snapshot"
)

// DERP maps as people paste them: `tailscale debug derp-map` (JSON), a
// tailnet policy file's derpMap (HuJSON: comments, trailing commas),
// headscale's DERP map file (YAML, Go field names lowercased, as
// headscale reads it into tailcfg.DERPMap) and the derp: block of its
// config (its embedded region); and `tailscale debug derp REGION`
// (ipnstate.DebugDERPRegionReport as JSON). The map is this node's as the
// live path reads it (File.DERPMap); debug derp's findings go to the
// thread facts.

// Kinds of input.
const (
	KindDERPMap   = "DERP map"
	KindDebugDERP = "tailscale debug derp"
)

// maxDocLines bounds a YAML document read as one input.
const maxDocLines = 20000

var (
	// keyedObjectRE is a line opening a keyed JSON object: `"derpMap": {`,
	// `"nodekey:…": {`, `"Self": {`.
	keyedObjectRE = lazyRE(`^"([^"]{1,80})"\s*:\s*\{`)
	// debugRegionRE is debug derp's "Region 900 == \"home\"".
	debugRegionRE = lazyRE(`^Region (\d+) == "([^"]*)"$`)
	debugNodeRE   = lazyRE(`^Node "([^"]*)" (returned|did not return) a IPv4 STUN response`)
)

// derpMapJSON reads a DERP map (JSON, or HuJSON made standard) holding
// at least one region; false when raw is none.
func (p *paste) derpMapJSON(raw []byte, from string) (string, bool) {
	var dm tailcfg.DERPMap
	if err := json.Unmarshal(raw, &dm); err != nil {
		std, err2 := hujson.Standardize(bytes.Clone(raw))
		if err2 != nil || json.Unmarshal(std, &dm) != nil {
			return "", false
		}
	}
	return p.useDERPMap(&dm, from)
}

// useDERPMap takes dm as this node's DERP map (merged with one read
// before: a later region replaces an earlier one).
func (p *paste) useDERPMap(dm *tailcfg.DERPMap, from string) (string, bool) {
	if len(dm.Regions) == 0 {
		return "", false
	}
	t := &p.th
	if t.derpMap == nil {
		t.derpMap = &tailcfg.DERPMap{Regions: map[tscompat.RegionID]*tailcfg.DERPRegion{}}
	}
	var ids []int
	for rid, r := range dm.Regions {
		id := tscompat.IntRegionID(rid)
		if r == nil || id <= 0 || len(t.derpMap.Regions) >= 1000 {
			continue
		}
		if r.RegionID == 0 {
			r.RegionID = rid
		}
		if len(r.Nodes) > 64 {
			r.Nodes = r.Nodes[:64]
		}
		t.derpMap.Regions[rid] = r
		t.derpMap.OmitDefaultRegions = t.derpMap.OmitDefaultRegions || dm.OmitDefaultRegions
		ids = append(ids, id)
		p.linkVia(id, r.RegionCode, r.RegionName, from)
	}
	slices.Sort(ids)
	var parts []string
	for _, id := range ids {
		r := dm.Regions[tscompat.RegionID(id)]
		s := strconv.Itoa(id) + " " + safetext.Clean(r.RegionCode)
		if why := unmeasurableShort(r); why != "" {
			s += " (" + why + ")"
		}
		parts = append(parts, s)
		if len(parts) == 12 {
			parts = append(parts, "…")
			break
		}
	}
	return fmt.Sprintf("%d regions: %s", len(ids), strings.Join(parts, ", ")), true
}

// unmeasurableShort is a few words on why a region cannot be measured.
func unmeasurableShort(r *tailcfg.DERPRegion) string {
	for _, n := range r.Nodes {
		if n != nil && n.RegionID != r.RegionID {
			return "a node without its RegionID"
		}
	}
	stun := len(r.Nodes) == 0
	for _, n := range r.Nodes {
		if n != nil && n.STUNPort >= 0 {
			stun = true
		}
	}
	if !stun {
		return "STUN off"
	}
	return ""
}

// linkVia records that the input tied region id to code, and how.
func (p *paste) linkVia(id int, code, name, from string) {
	code = safetext.Clean(knownName(code))
	if id <= 0 || code == "" {
		return
	}
	t := &p.th
	if t.linkFrom == nil {
		t.linkFrom = map[int]string{}
	}
	if _, ok := t.linkFrom[id]; !ok {
		t.linkFrom[id] = from
	}
	p.region(id, code, name)
}

// debugDERP reads `tailscale debug derp REGION` (ipn/localapi
// debugderp.go): the region's id and code, whether each node answered
// STUN, and the connections that failed.
func (p *paste) debugDERP(raw []byte) (string, bool) {
	var rep ipnstate.DebugDERPRegionReport
	if json.Unmarshal(raw, &rep) != nil || len(rep.Info)+len(rep.Warnings)+len(rep.Errors) == 0 {
		return "", false
	}
	id, code := 0, ""
	for _, s := range rep.Info {
		if m := debugRegionRE().FindStringSubmatch(s); m != nil {
			id, _ = strconv.Atoi(m[1])
			code = m[2]
		}
	}
	if id <= 0 {
		return "", false
	}
	p.linkVia(id, code, "", "`tailscale debug derp`")
	t := p.thread()
	silent, answered, errs := 0, 0, 0
	for _, s := range append(slices.Clone(rep.Info), rep.Warnings...) {
		m := debugNodeRE().FindStringSubmatch(s)
		if m == nil {
			continue
		}
		if m[2] == "returned" {
			answered++
			if !slices.Contains(t.STUNAnswered, id) {
				t.STUNAnswered = append(t.STUNAnswered, id)
			}
		} else {
			silent++
			if !slices.Contains(t.STUNSilent, id) {
				t.STUNSilent = append(t.STUNSilent, id)
			}
		}
	}
	for _, e := range rep.Errors {
		if strings.HasPrefix(e, "Error connecting to node") || strings.HasPrefix(e, "Error upgrading connection") {
			errs++
			p.derpError(id, safetext.Clean(knownName(code)), e, p.now)
		}
	}
	return fmt.Sprintf("region %d %q: %d nodes answered STUN, %d did not; %d connection errors", id, safetext.Clean(code), answered, silent, errs), true
}

// readDoc reads a document starting at line i that is not plain JSON: a
// HuJSON document (a policy file with a derpMap), a keyed JSON object
// (`"derpMap": {`, a peer of `tailscale status --json` cut from its
// Peer map), or a YAML DERP map or headscale derp: block. It returns how
// many lines the document spans (0: none), charging budget with what it
// scanned.
func (p *paste) readDoc(name string, data []byte, lines *pasteLines, i int, budget *int) (int, error) {
	raw := lines.line(i)
	t := strings.TrimSpace(raw)
	if t == "" {
		return 0, nil
	}
	switch {
	case t[0] == '{' || t[0] == '"':
		off := lines.offset(i) + strings.IndexByte(raw, '{')
		key := ""
		if t[0] == '"' {
			m := keyedObjectRE().FindStringSubmatch(t)
			if m == nil {
				return 0, nil
			}
			key = m[1]
		}
		if off < lines.offset(i) {
			return 0, nil
		}
		end := jsonObjectEnd(data[off:])
		if end < 0 {
			*budget -= len(data) - off
			return 0, nil
		}
		*budget -= end
		doc := data[off : off+end]
		span := bytes.Count(doc, []byte("\n")) + 1
		kind, note, ok := p.keyedDoc(key, doc)
		if !ok {
			return 0, nil
		}
		p.addInput(snapshot.Input{Name: name, Kind: kind, First: i + 1, Last: i + span, Note: note})
		return span, nil
	case t == "derp:" || t == "regions:":
		indent := len(raw) - len(strings.TrimLeft(raw, " \t"))
		n := 1
		for lines.has(i+n) && n < maxDocLines {
			l := lines.line(i + n)
			in := len(l) - len(strings.TrimLeft(l, " \t"))
			if strings.TrimSpace(l) != "" && (in <= indent || len(l) > MaxLineBytes) {
				break
			}
			n++
		}
		for n > 1 && strings.TrimSpace(lines.line(i+n-1)) == "" {
			n--
		}
		if n == 1 {
			return 0, nil
		}
		var b strings.Builder
		for k := 0; k < n; k++ {
			l := lines.line(i + k)
			if len(l) >= indent {
				l = l[indent:]
			}
			b.WriteString(l)
			b.WriteByte('\n')
		}
		kind, note, ok := p.yamlDoc(t, []byte(b.String()))
		if !ok {
			return 0, nil
		}
		p.textLines += n - 1
		p.addInput(snapshot.Input{Name: name, Kind: kind, First: i + 1, Last: i + n, Note: note})
		return n, nil
	}
	return 0, nil
}

// keyedDoc reads a JSON (or HuJSON) object, standing alone (key "") or
// under key.
func (p *paste) keyedDoc(key string, doc []byte) (kind, note string, ok bool) {
	switch {
	case key == "derpMap" || key == "DERPMap" || key == "derp_map":
		note, ok = p.derpMapJSON(doc, "the input's DERP map")
		return KindDERPMap, note, ok
	case key == "Self" || strings.HasPrefix(key, "nodekey:"):
		return p.statusFragment(doc, key == "Self")
	case key == "":
		std, err := hujson.Standardize(bytes.Clone(doc))
		if err != nil {
			return "", "", false
		}
		var keys map[string]json.RawMessage
		if json.Unmarshal(std, &keys) != nil {
			return "", "", false
		}
		if dm := keys["derpMap"]; dm != nil {
			note, ok = p.derpMapJSON(dm, "the input's DERP map")
			return KindDERPMap, note, ok
		}
		if keys["Regions"] != nil {
			note, ok = p.derpMapJSON(std, "the input's DERP map")
			return KindDERPMap, note, ok
		}
	}
	return "", "", false
}

// yamlDoc reads headscale's DERP map file (regions:) or the derp: block
// of its config (the embedded region).
func (p *paste) yamlDoc(top string, doc []byte) (kind, note string, ok bool) {
	if top == "regions:" {
		var dm tailcfg.DERPMap
		if yaml.Unmarshal(doc, &dm) != nil {
			return "", "", false
		}
		note, ok = p.useDERPMap(&dm, "headscale's DERP map")
		return KindDERPMap, note, ok
	}
	var cfg struct {
		DERP struct {
			Server struct {
				Enabled    bool   `yaml:"enabled"`
				RegionID   int    `yaml:"region_id"`
				RegionCode string `yaml:"region_code"`
				RegionName string `yaml:"region_name"`
			} `yaml:"server"`
			URLs  []string `yaml:"urls"`
			Paths []string `yaml:"paths"`
		} `yaml:"derp"`
	}
	if yaml.Unmarshal(doc, &cfg) != nil {
		return "", "", false
	}
	srv := cfg.DERP.Server
	if !srv.Enabled || srv.RegionID <= 0 {
		return "", "", false
	}
	p.linkVia(srv.RegionID, srv.RegionCode, srv.RegionName, "headscale's derp config")
	note = fmt.Sprintf("headscale's embedded DERP region %d %q", srv.RegionID, safetext.Clean(srv.RegionCode))
	if len(cfg.DERP.URLs) == 0 && len(cfg.DERP.Paths) == 0 {
		note += ", the only region (no urls, no paths)"
	}
	return KindDERPMap, note, true
}
