package socket

// Cache is a connection's memory of its store:false responses (and of its
// generate:false pre-warms): what a later turn on the same socket needs to
// continue one by previous_response_id. Nothing of it is written anywhere;
// it dies with the connection, so on another socket the id is not found,
// as the Responses API's WebSocket mode specifies. It is bounded in
// entries and bytes (the capacity of the items kept), oldest out first.
// One goroutine (the turn loop) uses
// it: no lock.
type Cache struct {
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
	c.remove(id)
	for len(c.order) > 0 && (len(c.order) >= c.maxEntries || c.bytes+n > c.maxBytes) {
		c.remove(c.order[0])
	}
	c.m[id] = e
	c.order = append(c.order, id)
	c.bytes += n
}

// remove forgets id.
func (c *Cache) remove(id string) {
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
func (c *Cache) Len() int { return len(c.m) }
