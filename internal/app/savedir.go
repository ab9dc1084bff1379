package app

import (
	"errors"
	"path/filepath"
)

// UserSaveDir is where the dashboard's S saves snapshots when
// Dashboard.SaveDir is empty: the user's state directory, never the
// current one (under `go run` that is the repository).
//
//   - Linux and other Unix: $XDG_STATE_HOME/tailpath, else
//     ~/.local/state/tailpath (XDG Base Directory Specification: state
//     that should persist, such as logs and history).
//   - macOS: ~/Library/Application Support/tailpath.
//   - Windows: %LocalAppData%\tailpath.
//
// getenv and goos are os.Getenv and runtime.GOOS (tests pass others);
// home is the user's home directory ("" unknown). Errors: no directory
// can be named (no home, no LocalAppData).
func UserSaveDir(getenv func(string) string, goos, home string) (string, error) {
	switch goos {
	case "windows":
		if d := getenv("LocalAppData"); d != "" {
			return filepath.Join(d, "tailpath"), nil
		}
		return "", errors.New("%LocalAppData% is not set, so there is no place to save snapshots")
	case "darwin", "ios":
		if home == "" {
			return "", errors.New("no home directory to save snapshots in")
		}
		return filepath.Join(home, "Library", "Application Support", "tailpath"), nil
	}
	if d := getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "tailpath"), nil
	}
	if home == "" {
		return "", errors.New("no home directory and no $XDG_STATE_HOME to save snapshots in")
	}
	return filepath.Join(home, ".local", "state", "tailpath"), nil
}
