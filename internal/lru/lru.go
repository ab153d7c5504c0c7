// Package lru is a map bounded by the sizes of its values, least recently
// used first out, safe for concurrent use: what a host keeps of a
// conversation between its turns (runner's replayed chains and read
// conversations, the mapping's mapped history).
package lru

import (
	"container/list"
	"sync"
)

// Cache maps K to V within a budget of bytes (each value's size as put
// says). The zero Cache keeps nothing; make one with New.
type Cache[K comparable, V any] struct {
	mu   sync.Mutex
	max  int
	used int
	ll   list.List
	m    map[K]*list.Element
}

type entry[K comparable, V any] struct {
	key  K
	val  V
	size int
}

// New returns a Cache of at most max bytes.
func New[K comparable, V any](max int) *Cache[K, V] {
	return &Cache[K, V]{max: max, m: map[K]*list.Element{}}
}

// Get returns the value of k and marks it used.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[k]; ok {
		c.ll.MoveToFront(e)
		return e.Value.(*entry[K, V]).val, true
	}
	var zero V
	return zero, false
}

// Put keeps v under k, in place of what k had, evicting the least
// recently used values to make room; a value beyond the whole budget is
// not kept (and k keeps nothing).
func (c *Cache[K, V]) Put(k K, v V, size int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.remove(k)
	if size > c.max {
		return
	}
	for c.used+size > c.max {
		c.remove(c.ll.Back().Value.(*entry[K, V]).key)
	}
	c.m[k] = c.ll.PushFront(&entry[K, V]{key: k, val: v, size: size})
	c.used += size
}

// Remove forgets k.
func (c *Cache[K, V]) Remove(k K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.remove(k)
}

func (c *Cache[K, V]) remove(k K) {
	if e, ok := c.m[k]; ok {
		c.used -= e.Value.(*entry[K, V]).size
		c.ll.Remove(e)
		delete(c.m, k)
	}
}

// Len is how many values it keeps.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
