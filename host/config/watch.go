package config

import (
	"bytes"
	"context"
	"crypto/sha256"
	"os"
	"time"
)

// Watch polls the file at path every interval and calls onChange with the
// newly loaded configuration (or the error that refused it) whenever its
// content changes. Polling the content's hash, not watching inodes, survives
// editors that replace the file and config maps that swap symlinks. It
// returns when ctx is done.
func Watch(ctx context.Context, path string, interval time.Duration, onChange func(*Config, error)) {
	last := digest(path)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		d := digest(path)
		if d == nil || bytes.Equal(d, last) {
			continue // unreadable for a moment (being replaced) or unchanged
		}
		last = d
		onChange(Load(path))
	}
}

func digest(path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		// Unreadable, or caught between a truncate and the write that
		// follows: an empty file would load as all defaults.
		return nil
	}
	sum := sha256.Sum256(b)
	return sum[:]
}
