package tailscaled

import (
	"bytes"
	"context"
	"io"
	"sync"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"tailscale.com/tailcfg"
)

// The DERP map and WhoIs replies, read by hand with the IPN bus's readers
// (busdecode.go). A daemon that sends no netmap on the bus (tailscaled
// v1.104) is asked both on a one-shot status's critical path, and the
// decoders built by reflection for them (encoding/json's for
// tailcfg.DERPMap in local.Client.CurrentDERPMap, json v2's for nodeLite
// in whoisLite) cost about a millisecond of CPU each in a new process,
// more than the decoding itself (docs/perf.md, issue 31).

// readDERPMap is c.CurrentDERPMap(ctx), read by hand for a client that
// makes raw LocalAPI requests (*local.Client): the same request (GET
// /localapi/v0/derpmap) decoded by decodeDERPMap. When that request or
// its decoding fails, c.CurrentDERPMap is asked, so errors are its own and
// a reply only encoding/json reads as it does is read by encoding/json.
func readDERPMap(ctx context.Context, c LocalClient) (*tailcfg.DERPMap, error) {
	if raw, ok := c.(rawLocalAPI); ok {
		if dm, err := readDERPMapRaw(ctx, raw); err == nil {
			return dm, nil
		}
	}
	return c.CurrentDERPMap(ctx)
}

func readDERPMapRaw(ctx context.Context, c rawLocalAPI) (*tailcfg.DERPMap, error) {
	res, err := localGetOK(ctx, c, "/localapi/v0/derpmap")
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	return decodeDERPMap(res.Body)
}

// decodeDERPMap reads a DERP map reply as encoding/json reads it into a
// tailcfg.DERPMap (local.Client.CurrentDERPMap), with the bus's DERP map
// reader, which reads every field of the map, its regions and their
// nodes. What that reader leaves to reflection (errNotByHand: null where
// a value goes, a name given twice or matching a field only without case,
// a region key not written as strconv.Itoa writes it, a deprecated
// region Avoid) and a reply that is no object are errors:
// FuzzDecodeDERPMap holds it to encoding/json's answer.
func decodeDERPMap(r io.Reader) (*tailcfg.DERPMap, error) {
	d := handDecoder{jsontext.NewDecoder(r, jsontext.AllowDuplicateNames(true))}
	if k := d.dec.PeekKind(); k != '{' {
		return nil, d.unread("the DERP map", k)
	}
	var dm *tailcfg.DERPMap
	if err := d.derpMap(&dm); err != nil {
		return nil, err
	}
	if err := d.end("the DERP map"); err != nil {
		return nil, err
	}
	return dm, nil
}

// whoisNames is the member of a WhoIs reply (apitype.WhoIsResponse) that
// Gather reads: the node, not the user's profile or the capabilities.
var whoisNames = []string{"Node"}

// decodeWhoIsNode reads a WhoIs reply's node as json v2 reads it into
// struct{ Node *nodeLite } with liteDecode (whoisLite's reference), with
// the bus's node reader; what that reader leaves to reflection is an
// error (errNotByHand). FuzzDecodeWhoIsNode holds it to json v2's answer.
func decodeWhoIsNode(b []byte) (*nodeLite, error) {
	dec := decoders.Get().(*jsontext.Decoder)
	defer decoders.Put(dec)
	// A bytes.Buffer is parsed where it lies, not copied.
	dec.Reset(bytes.NewBuffer(b), jsontext.AllowDuplicateNames(true))
	d := handDecoder{dec}
	if k := d.dec.PeekKind(); k != '{' {
		return nil, d.unread("a WhoIs reply", k)
	}
	var n *nodeLite
	if err := d.fields("WhoIs", whoisNames, func(name []byte) (int, error) {
		if string(name) == "Node" {
			return 0, d.nodePtr(&n)
		}
		return 0, errUnknownMember
	}); err != nil {
		return nil, err
	}
	if err := d.end("the WhoIs reply"); err != nil {
		return nil, err
	}
	return n, nil
}

// decoders are jsontext decoders for decodeWhoIsNode to reuse: a gather
// on a daemon that sends no netmap reads a WhoIs reply per peer it
// explains, a thousand on a large tailnet, and a new decoder's state
// and buffer were most of each reply's allocations.
var decoders = sync.Pool{New: func() any { return jsontext.NewDecoder(new(bytes.Buffer)) }}

// whoisNodeOf is a WhoIs reply's node: read by hand, or by json v2 what
// the hand reader leaves; ok is false for a reply neither reads.
func whoisNodeOf(b []byte) (n *nodeLite, ok bool) {
	if n, err := decodeWhoIsNode(b); err == nil {
		return n, true
	}
	var w struct{ Node *nodeLite }
	if err := jsonv2.Unmarshal(b, &w, liteDecode); err != nil {
		return nil, false
	}
	return w.Node, true
}
