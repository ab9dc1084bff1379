package localapi

import (
	"context"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"tailscale.com/ipn/ipnstate"
)

// readStatus is c.Status(ctx), decoded faster for a client that makes
// raw LocalAPI requests (*local.Client): the same request (GET
// /localapi/v0/status) decoded into the same ipnstate.Status by the json
// v2 decoder with encoding/json's semantics (jsonv1.DefaultOptionsV1), in
// half the time of encoding/json for 1,000 peers (docs/perf.md, issue 8).
// When that request or its decoding fails, c.Status is asked, so errors
// are Status's own (access denied, not running, a reply that does not
// parse) and a reply only encoding/json accepts is still read.
func readStatus(ctx context.Context, c LocalClient) (*ipnstate.Status, error) {
	if raw, ok := c.(rawLocalAPI); ok {
		if st, err := readStatusRaw(ctx, raw); err == nil {
			return st, nil
		}
	}
	return c.Status(ctx)
}

// statusDecodeOptions decode Status as encoding/json does.
var statusDecodeOptions = jsonv1.DefaultOptionsV1()

func readStatusRaw(ctx context.Context, c rawLocalAPI) (*ipnstate.Status, error) {
	res, err := localGetOK(ctx, c, "/localapi/v0/status")
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	var st *ipnstate.Status
	if err := jsonv2.UnmarshalRead(res.Body, &st, statusDecodeOptions); err != nil {
		return nil, err
	}
	return st, nil
}
