package schema

import (
	"crypto/sha256"
	"encoding/json"
	"sync"
)

// cacheSize bounds the compiled schemas kept. A structured-output request is
// compiled at admission (Check), in the agent and, offline, in the
// generator; the cache makes that one compilation per distinct schema.
// Clients tend to send the same few schemas again and again, so a small
// cache catches nearly all of them; 256 entries of at most MaxSchemaBytes
// source each keep the worst case bounded.
const cacheSize = 256

// compiled maps the sha256 digest of a schema's bytes to its compilation.
// The digest, not the bytes, is the key so the cache holds no client text
// beyond what the compiled form needs. Only successes are kept: a schema that
// fails to compile is refused at admission and never reaches the later
// compilations.
var compiled = &cache{m: make(map[[sha256.Size]byte]*Schema, cacheSize)}

type cache struct {
	mu   sync.Mutex
	m    map[[sha256.Size]byte]*Schema
	ring [cacheSize][sha256.Size]byte // insertion order, for eviction
	next int
}

func (c *cache) get(k [sha256.Size]byte) *Schema {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[k]
}

// put stores s under k, evicting the oldest entry when full (first in, first
// out: simpler than LRU, and a hot schema that is evicted costs one compile).
func (c *cache) put(k [sha256.Size]byte, s *Schema) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[k]; ok {
		return
	}
	if len(c.m) >= cacheSize {
		delete(c.m, c.ring[c.next])
	}
	c.ring[c.next] = k
	c.next = (c.next + 1) % cacheSize
	c.m[k] = s
}

func digest(raw json.RawMessage) [sha256.Size]byte { return sha256.Sum256(raw) }
