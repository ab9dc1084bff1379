// Package prebuilt builds the test suite's slow prerequisites once, outside
// any test's time limit, and keeps them by a hash of everything they are
// built from: the real tailscaled and tailscale CLI the NAT lab and the
// status tests run (minutes to compile on two busy cores), and the test
// ELFs the backtrace decoder is checked against.
//
// Each Item lives in its own directory under Dir, named by its Name and the
// SHA-256 of its Inputs; a directory there is complete (it is renamed into
// place when its build has finished), so a second test binary, or the next
// run, uses it as it is. `.ci/run` fills the cache before `go test` with
// `go run ./internal/prebuilt/prebuild`; a test that finds its item missing
// builds it itself, with no deadline of its own (only go test's -timeout
// bounds it). A missing tool is ErrMissingTool: the test skips, naming
// what to install.
package prebuilt

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// Env names the cache directory when set (.ci/run sets it); otherwise the
// cache is tailpath/prebuilt under os.UserCacheDir.
const Env = "TAILPATH_PREBUILT"

// ErrMissingTool is returned (wrapped, with the tool and what to install)
// when a tool an Item's build needs is not on PATH.
var ErrMissingTool = errors.New("missing tool")

// Item is one prerequisite.
type Item struct {
	// Name names its directory ("tailscale", "xtensa-elf").
	Name string
	// Tools must all be on PATH; Install says what provides them
	// ("apt-get install gcc-xtensa-lx106").
	Tools   []string
	Install string
	// Inputs are everything its files depend on (sources, tool versions,
	// flags), hashed into its directory's name. Inputs may call tools.
	Inputs func() ([]byte, error)
	// Build writes its files into dir, an empty directory.
	Build func(dir string) error
}

// Dir is the cache's root directory: $TAILPATH_PREBUILT, else
// tailpath/prebuilt in the user's cache directory.
func Dir() (string, error) {
	if d := os.Getenv(Env); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for prebuilt test tools (set %s): %w", Env, err)
	}
	return filepath.Join(d, "tailpath", "prebuilt"), nil
}

// Get returns the directory holding the item's files, building them first when
// the cache has none for its current inputs. Concurrent callers in one
// process share one build; in two processes each may build, and the first
// to finish is kept.
func Get(it Item) (string, error) {
	once := onceFor(it.Name)
	once.Do(func() { once.dir, once.err = get(it) })
	return once.dir, once.err
}

// Path is what Get would return without building: the directory and
// whether it is there.
func Path(it Item) (dir string, ok bool, err error) {
	dir, err = path(it)
	if err != nil {
		return "", false, err
	}
	_, err = os.Stat(dir)
	return dir, err == nil, nil
}

func path(it Item) (string, error) {
	for _, tool := range it.Tools {
		if _, err := exec.LookPath(tool); err != nil {
			return "", fmt.Errorf("%w: %s not found (%s)", ErrMissingTool, tool, it.Install)
		}
	}
	in, err := it.Inputs()
	if err != nil {
		return "", fmt.Errorf("%s: reading its inputs: %w", it.Name, err)
	}
	root, err := Dir()
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(in)
	return filepath.Join(root, it.Name+"-"+hex.EncodeToString(h[:8])), nil
}

func get(it Item) (string, error) {
	dir, err := path(it)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(dir); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".building-"+it.Name+"-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := it.Build(tmp); err != nil {
		return "", fmt.Errorf("building %s: %w", it.Name, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp's is 0700
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(dir); serr == nil {
			return dir, nil // another process finished first
		}
		return "", err
	}
	return dir, nil
}

// onces keeps one build per item name in this process.
var (
	oncesMu sync.Mutex
	onces   = map[string]*itemOnce{}
)

type itemOnce struct {
	sync.Once
	dir string
	err error
}

func onceFor(name string) *itemOnce {
	oncesMu.Lock()
	defer oncesMu.Unlock()
	o := onces[name]
	if o == nil {
		o = &itemOnce{}
		onces[name] = o
	}
	return o
}

// ModuleRoot is the directory of the main module's go.mod, found from the
// working directory upwards (a test runs in its package's directory).
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory: %w", fs.ErrNotExist)
		}
		dir = parent
	}
}

// Tailscale is the real tailscaled and tailscale CLI built from the
// tailscale.com module tailpath's go.mod pins (in root, the module's
// directory), for this machine. Its inputs are go.mod and go.sum (every
// module version the build may use), the go command's version and the
// platform it builds for.
func Tailscale(root string) Item {
	goEnv := func() ([]byte, error) {
		cmd := exec.Command("go", "env", "GOVERSION", "GOOS", "GOARCH", "CGO_ENABLED", "GOAMD64", "GOARM64")
		cmd.Dir = root
		return cmd.Output()
	}
	return Item{
		Name:    "tailscale",
		Tools:   []string{"go"},
		Install: "the go command builds tailscaled from the module cache",
		Inputs: func() ([]byte, error) {
			env, err := goEnv()
			if err != nil {
				return nil, fmt.Errorf("go env: %w", err)
			}
			var b []byte
			b = append(b, "go build tailscale.com/cmd/tailscaled tailscale.com/cmd/tailscale\n"...)
			b = append(b, env...)
			for _, f := range []string{"go.mod", "go.sum"} {
				data, err := os.ReadFile(filepath.Join(root, f))
				if err != nil {
					return nil, err
				}
				b = append(b, data...)
			}
			return b, nil
		},
		Build: func(dir string) error {
			cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator),
				"tailscale.com/cmd/tailscaled", "tailscale.com/cmd/tailscale")
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly")
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("go build tailscaled tailscale: %w\n%s", err, out)
			}
			return nil
		},
	}
}

// TailscaleBinaries is tailscaled's and tailscale's paths in dir, Get's
// answer for Tailscale.
func TailscaleBinaries(dir string) (tailscaled, tailscale string) {
	return filepath.Join(dir, "tailscaled"), filepath.Join(dir, "tailscale")
}

// CompilerInputs is the compiler's own version text (`cc --version`)
// followed by args and source: a C build's inputs.
func CompilerInputs(cc string, args []string, source []byte) ([]byte, error) {
	v, err := exec.Command(cc, "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --version: %w", cc, err)
	}
	b := append(v, strings.Join(args, "\x00")...)
	b = append(b, 0)
	return append(b, source...), nil
}
