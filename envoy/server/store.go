package server

// The plugin store keeps plugin bytes named by their SHA-256 and serves
// them over HTTP, for hosts that receive plugin references over ECDS.
//
// Content addressing is what makes a push safe: a name is only ever bound
// to one content, so a host can fetch a reference long after the gateway
// file moved on, a cached copy never goes stale, and the host can check
// the bytes against the name before it runs them.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

var sha256RE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// Store is a directory of plugin files, each named by the hex SHA-256 of
// its bytes.
type Store struct{ dir string }

// OpenStore uses dir as the store, creating it if needed.
func OpenStore(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("plugin store: %w", err)
	}
	return &Store{dir: dir}, nil
}

// Put copies the file at path into the store and returns its SHA-256.
// Entries are never removed: hosts may still be fetching an older one.
func (s *Store) Put(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	h := hex.EncodeToString(sum[:])
	dst := filepath.Join(s.dir, h)
	if same, err := os.ReadFile(dst); err == nil && sha256.Sum256(same) == sum {
		return h, nil
	}
	// Absent, or damaged on disk: (re)write it.
	// Write then rename, so a reader never sees a partial file under its
	// final name.
	tmp, err := os.CreateTemp(s.dir, ".put-*")
	if err != nil {
		return "", fmt.Errorf("plugin store: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return "", fmt.Errorf("plugin store: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("plugin store: %w", err)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return "", fmt.Errorf("plugin store: %w", err)
	}
	return h, nil
}

// PluginURL is where a plugin is fetched from, given the base URL hosts reach
// the store's handler at.
func PluginURL(base, sha string) string {
	return strings.TrimRight(base, "/") + "/plugins/" + sha
}

// Handler serves GET /plugins/<sha256>. The bytes under a name never
// change, so responses may be cached forever.
func (s *Store) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /plugins/{sha}", func(w http.ResponseWriter, r *http.Request) {
		h := r.PathValue("sha")
		if !sha256RE.MatchString(h) {
			http.Error(w, "want /plugins/<64 lowercase hex digits>", http.StatusNotFound)
			return
		}
		f, err := os.Open(filepath.Join(s.dir, h))
		if err != nil {
			http.Error(w, "no plugin "+h, http.StatusNotFound)
			return
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/wasm")
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		w.Header().Set("ETag", `"`+h+`"`)
		http.ServeContent(w, r, "", fi.ModTime(), f)
	})
	return mux
}
