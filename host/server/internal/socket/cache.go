package socket

import "sync"

// Cache is a connection's memory of its store:false responses (and of its
// generate:false pre-warms): what a later turn on the same socket needs to
// continue one by previous_response_id. Nothing of it is written anywhere;
// it dies with the connection, so on another socket the id is not found,
// as the Responses API's WebSocket mode specifies. It is bounded in
// entries and bytes (the capacity of the items kept), oldest out first.
// The turns of several lanes use it at
// once: its methods lock.
type Cache struct {
	mu         sync.Mutex
	maxEntries int
	maxBytes   int
	bytes      int
	order      []string // ids, oldest first
	m          map[string]*entry
}

// entry is one cached response.
type entry struct {
	// items is the JSON array of input items that replays the response:
	// its inputs and outputs after those of prev.
	items []byte
	// prev is a stored response the items follow ("" for none): the
	// expanded turn sends it as its previous_response_id.
	prev string
	// sessionID and threadID are the run's, so a continuation stays in
	// its session and thread ("" for a pre-warm, which made no run).
	sessionID, threadID string
}

// NewCache keeps at most maxEntries responses of at most maxBytes of
// items in all.
func NewCache(maxEntries, maxBytes int) *Cache {
	return &Cache{maxEntries: maxEntries, maxBytes: maxBytes, m: map[string]*entry{}}
}

func (c *Cache) get(id string) (*entry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[id]
	return e, ok
}

// put keeps e under id, dropping the oldest entries to stay in bounds; an
// entry larger than the byte bound alone is not kept.
func (c *Cache) put(id string, e *entry) {
	n := cap(e.items)
	if c.maxEntries <= 0 || n > c.maxBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeLocked(id)
	for len(c.order) > 0 && (len(c.order) >= c.maxEntries || c.bytes+n > c.maxBytes) {
		c.removeLocked(c.order[0])
	}
	c.m[id] = e
	c.order = append(c.order, id)
	c.bytes += n
}

// remove forgets id.
func (c *Cache) remove(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeLocked(id)
}

func (c *Cache) removeLocked(id string) {
	e, ok := c.m[id]
	if !ok {
		return
	}
	delete(c.m, id)
	c.bytes -= cap(e.items)
	for i, o := range c.order {
		if o == id {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
}

// Len is the number of cached responses.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// Bytes is what the cached items hold, by capacity.
func (c *Cache) Bytes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}
