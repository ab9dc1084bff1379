package app

import (
	"errors"
	"os"

	"github.com/tailpath/tailpath/probes/controlapi"
)

// geteuid is os.Geteuid (tests replace it).
var geteuid = os.Geteuid

// ControlAPI returns the control-API client the environment and flags ask
// for: none (nil, nil) with noAPI or without credentials; an error for a
// refused key file or inconsistent variables. keyFile, when set, is
// read with probes.ReadAPIKeyFile and takes the place of
// TAILSCALE_API_KEY; baseURL, when set (--api-base-url), takes the place
// of TAILSCALE_BASE_URL; getenv is os.Getenv.
//
// As root, a key from a file is never sent where the environment says:
// TAILSCALE_BASE_URL beside --api-key-file is an error (name the URL with
// --api-base-url), since the variable survives `sudo -E` and `su` without
// `-` and may be another user's, who would get root's key at their
// server.
func ControlAPI(keyFile, baseURL string, noAPI bool, getenv func(string) string) (*controlapi.ControlAPI, error) {
	if noAPI {
		return nil, nil
	}
	cfg, err := controlapi.APIConfigFromEnv(getenv)
	if err != nil {
		return nil, err
	}
	if keyFile != "" {
		if geteuid() == 0 && baseURL == "" && getenv("TAILSCALE_BASE_URL") != "" {
			return nil, errors.New("TAILSCALE_BASE_URL is set, and the key comes from --api-key-file: as root, tailpath does not send a key read from a file to an address the environment names (it may be another user's, kept through sudo -E or su without -); unset TAILSCALE_BASE_URL, or name the address with --api-base-url")
		}
		key, err := controlapi.ReadAPIKeyFile(keyFile)
		if err != nil {
			return nil, err
		}
		cfg.APIKey = key
		cfg.OAuthClientID, cfg.OAuthClientSecret = "", controlapi.APISecret{}
	}
	if baseURL != "" {
		cfg.BaseURL = baseURL
	}
	if !cfg.Configured() {
		return nil, nil
	}
	return controlapi.NewControlAPI(cfg)
}
