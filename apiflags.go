package main

import (
	"flag"
	"os"

	"github.com/tailpath/tailpath/internal/app"
	"github.com/tailpath/tailpath/probes/controlapi"
)

// apiFlags are the control-API flags of the commands that diagnose peers
// (the dashboard, status). Credentials come from the environment as the
// Tailscale Terraform provider names them: TAILSCALE_API_KEY, or
// TAILSCALE_OAUTH_CLIENT_ID and TAILSCALE_OAUTH_CLIENT_SECRET, with
// TAILSCALE_TAILNET and TAILSCALE_BASE_URL.
type apiFlags struct {
	keyFile string // --api-key-file: read the API key from this file (mode 600)
	baseURL string // --api-base-url: the control API's base URL, in place of TAILSCALE_BASE_URL
	noAPI   bool   // --no-api: do not use the control API even with credentials
}

func (f *apiFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.keyFile, "api-key-file", "", "read a read-only Tailscale API key from this file (a regular file of yours or root's, readable by its owner only) for the peer's side of each path")
	fs.StringVar(&f.baseURL, "api-base-url", "", "the control API's base URL (default $TAILSCALE_BASE_URL, else "+controlapi.DefaultAPIBaseURL+"); as root beside --api-key-file, only this names it")
	fs.BoolVar(&f.noAPI, "no-api", false, "do not use the Tailscale control API, even when TAILSCALE_API_KEY or an OAuth client is set")
}

// open returns the control-API client, or nil when none is configured.
func (f *apiFlags) open() (*controlapi.ControlAPI, error) {
	return app.ControlAPI(f.keyFile, f.baseURL, f.noAPI, os.Getenv)
}
