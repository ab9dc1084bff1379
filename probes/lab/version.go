package lab

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
)

// Version is what the lab's nodes say they run in the LocalAPI replies a
// snapshot records (Status.Version, each WhoIs node's
// Hostinfo.IPNVersion), in place of tailscale.com/version.Long()'s
// "1.102.5-ERR-BuildInfo": a binary built without VCS stamping (`go run .
// demo`, GOFLAGS=-buildvcs=false) reads that way (version.Long, when
// debug.ReadBuildInfo carries no vcs.revision), which looks like an error
// in a demo snapshot. The lab's nodes are the tailscale.com module built
// into tailpath; "-lab" says so.
const versionSuffix = "-lab"

// errBuildInfo is version.Long()'s suffix without VCS information.
var errBuildInfo = []byte("-ERR-BuildInfo\"")

// versionTransport rewrites the version of the lab's nodes in the
// observer's status and WhoIs replies (small, whole JSON documents; the
// IPN bus, a stream, is passed as it is).
type versionTransport struct{ rt http.RoundTripper }

// maxReply bounds a reply versionTransport reads whole.
const maxReply = 64 << 20

func (t versionTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	switch req.URL.Path {
	case "/localapi/v0/status", "/localapi/v0/whois":
	default:
		return resp, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxReply+1))
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("lab: reading %s: %w", req.URL.Path, err)
	}
	if len(body) > maxReply {
		return nil, fmt.Errorf("lab: %s reply over %d MiB", req.URL.Path, maxReply>>20)
	}
	body = bytes.ReplaceAll(body, errBuildInfo, []byte(versionSuffix+"\""))
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Del("Content-Length")
	return resp, nil
}
