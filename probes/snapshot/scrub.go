package snapshot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Scrub returns a copy of f fit to serve to the callers `tailpath serve`
// lets read it (/snapshot.json): what Redact leaves out is left out (log
// ids with the rest of Hostinfo but OS, version, host name and NetInfo;
// SSH host keys, PeerAPI URLs, tags, routes, capabilities but
// only-tcp-443, locations, certificate domains, what the control API
// said in an error), and node, disco and machine keys become
// placeholders of their type, equal keys staying equal; but nothing is
// renamed: host names, addresses, stable ids, logins and the tailnet's
// name stay, since a fleet reads them. The copy diagnoses as f does.
// Scrub checks its output for every original key and returns ErrLeak
// rather than a file that holds one.
func Scrub(f *File) (*File, error) {
	orig, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	r := &redactor{keepNames: true, origKeys: map[string]bool{}, keys: map[string]string{}}
	for _, k := range keyRE().FindAllString(string(orig), -1) {
		r.origKeys[strings.ToLower(k)] = true
	}
	b, err := json.Marshal(r.prune(f))
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, err
	}
	if b, err = json.Marshal(r.walkKeys(tree)); err != nil {
		return nil, err
	}
	for _, k := range keyRE().FindAllString(string(b), -1) {
		if r.origKeys[strings.ToLower(k)] {
			return nil, fmt.Errorf("%w: a key is still present; not serving it", ErrLeak)
		}
	}
	var out File
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("snapshot: scrubbed file does not decode: %w", err)
	}
	return &out, nil
}

// walkKeys replaces every key in a decoded JSON tree (strings and object
// keys, whole or inside text) with its placeholder, and nothing else.
func (r *redactor) walkKeys(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		// Sorted, so placeholders are handed out in the same order every time.
		for _, k := range slices.Sorted(maps.Keys(v)) {
			out[r.keysIn(k)] = r.walkKeys(v[k])
		}
		return out
	case []any:
		for i, e := range v {
			v[i] = r.walkKeys(e)
		}
		return v
	case string:
		return r.keysIn(v)
	}
	return v
}

// keysIn replaces the keys in s with their placeholders.
func (r *redactor) keysIn(s string) string {
	// Every key keyRE finds has "key:" or "nlpub:" in it; most strings
	// have neither, and the regexp is the slow part.
	if !strings.Contains(s, "key:") && !strings.Contains(s, "nlpub:") && !strings.Contains(s, "key-sig:") {
		return s
	}
	return keyRE().ReplaceAllStringFunc(s, r.key)
}
