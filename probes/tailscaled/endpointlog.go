package tailscaled

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"time"

	"tailscale.com/client/local"
	"tailscale.com/client/tailscale/apitype"

	"github.com/tailpath/tailpath/internal/safetext"
	"github.com/tailpath/tailpath/probes"
)

// maxEndpointLog bounds how much of the endpoint-change log is read (bytes).
const maxEndpointLog = 1 << 20

// maxChangeText bounds the From/To text kept per change (bytes).
const maxChangeText = 160

// ErrNoEndpointLog is returned by EndpointChanges when the client cannot
// make raw LocalAPI requests (it is not a *local.Client).
var ErrNoEndpointLog = errors.New("endpoint-change log needs a LocalAPI client with DoLocalRequest")

// rawLocalAPI is the raw request method *local.Client has.
type rawLocalAPI interface {
	DoLocalRequest(req *http.Request) (*http.Response, error)
}

var _ rawLocalAPI = (*local.Client)(nil)

// localGet is GET pathQuery ("/localapi/v0/status", with any query) to
// tailscaled through c's own transport. The caller closes the body.
func localGet(ctx context.Context, c rawLocalAPI, pathQuery string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", "http://"+apitype.LocalAPIHost+pathQuery, nil)
	if err != nil {
		return nil, err
	}
	return c.DoLocalRequest(req)
}

// localGetOK is localGet with any status but 200 OK an error (the body
// closed).
func localGetOK(ctx context.Context, c rawLocalAPI, pathQuery string) (*http.Response, error) {
	res, err := localGet(ctx, c, pathQuery)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		res.Body.Close()
		return nil, errors.New(res.Status)
	}
	return res, nil
}

// EndpointChanges reads the daemon's recent endpoint-change log for the peer
// with Tailscale IP ip (GET /localapi/v0/debug-peer-endpoint-changes?ip=,
// read permission; what `tailscale debug peer-endpoint-changes` prints),
// oldest first. What is the daemon's event name
// ("handlePongConnLocked-bestAddr-update", "deleteEndpointLocked-bestAddr-…",
// "handleCallMeMaybe-new-endpoints", "updateFromNode-DERP"); From and To are
// the states as compact, sanitised JSON cut to 160 bytes.
//
// Errors: ErrNoEndpointLog when c is not a *local.Client (or another type
// with DoLocalRequest); LocalAPI failures through ConnectError; a reply
// that does not parse wraps ErrBadReply.
func EndpointChanges(ctx context.Context, c LocalClient, ip netip.Addr) ([]probes.EndpointChange, error) {
	raw, ok := c.(rawLocalAPI)
	if !ok {
		return nil, ErrNoEndpointLog
	}
	res, err := localGet(ctx, raw, "/localapi/v0/debug-peer-endpoint-changes?ip="+url.QueryEscape(ip.String()))
	if err != nil {
		return nil, ConnectError(err, socketOf(c))
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxEndpointLog))
	if err != nil {
		return nil, fmt.Errorf("endpoint-change log: %w", err)
	}
	if res.StatusCode != http.StatusOK {
		err := fmt.Errorf("endpoint-change log: %s: %s", res.Status, bytes.TrimSpace(body))
		if res.StatusCode == http.StatusForbidden {
			return nil, &actionableError{msg: errText(err), kind: ErrPermission, cause: err}
		}
		return nil, errors.New(errText(err))
	}
	return parseEndpointChanges(body)
}

// parseEndpointChanges decodes the LocalAPI's JSON array of
// magicsock.EndpointChange ({When, What, From, To}); "null" is an empty log.
func parseEndpointChanges(b []byte) ([]probes.EndpointChange, error) {
	var raw []struct {
		When time.Time
		What string
		From json.RawMessage
		To   json.RawMessage
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, &actionableError{
			msg:   "endpoint-change log: " + errText(err),
			kind:  ErrBadReply,
			cause: err,
		}
	}
	out := make([]probes.EndpointChange, 0, len(raw))
	for _, r := range raw {
		out = append(out, probes.EndpointChange{
			When: r.When,
			What: safetext.New(r.What),
			From: changeText(r.From),
			To:   changeText(r.To),
		})
	}
	return out, nil
}

// changeText is a From/To payload as compact, sanitised, bounded text.
func changeText(m json.RawMessage) safetext.Text {
	if len(m) == 0 || string(m) == "null" {
		return ""
	}
	var b bytes.Buffer
	if json.Compact(&b, m) != nil {
		return ""
	}
	return safetext.New(b.String()).Cut(maxChangeText)
}
