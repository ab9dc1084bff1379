package app

import (
	"github.com/tailpath/tailpath/probes/controlapi"
)

// ControlAPI returns the control-API client the environment and flags ask
// for: none (nil, nil) with noAPI or without credentials; an error for a
// refused key file or inconsistent variables. keyFile, when set, is
// read with probes.ReadAPIKeyFile and takes the place of
// TAILSCALE_API_KEY; getenv is os.Getenv.
func ControlAPI(keyFile string, noAPI bool, getenv func(string) string) (*controlapi.ControlAPI, error) {
	if noAPI {
		return nil, nil
	}
	cfg, err := controlapi.APIConfigFromEnv(getenv)
	if err != nil {
		return nil, err
	}
	if keyFile != "" {
		key, err := controlapi.ReadAPIKeyFile(keyFile)
		if err != nil {
			return nil, err
		}
		cfg.APIKey = key
		cfg.OAuthClientID, cfg.OAuthClientSecret = "", controlapi.APISecret{}
	}
	if !cfg.Configured() {
		return nil, nil
	}
	return controlapi.NewControlAPI(cfg)
}
