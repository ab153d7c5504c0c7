package lru

import "testing"

func TestBudget(t *testing.T) {
	c := New[string, int](10)
	c.Put("a", 1, 4)
	c.Put("b", 2, 4)
	if _, ok := c.Get("a"); !ok { // a is now the most recently used
		t.Fatal("a is gone")
	}
	c.Put("c", 3, 4) // evicts b
	if _, ok := c.Get("b"); ok {
		t.Error("b was kept past the budget")
	}
	if v, ok := c.Get("a"); !ok || v != 1 {
		t.Errorf("a = %d, %v", v, ok)
	}
	c.Put("a", 5, 7) // replaces a; evicts c
	if v, _ := c.Get("a"); v != 5 || c.Len() != 1 {
		t.Errorf("a = %d, %d values kept", v, c.Len())
	}
	c.Put("big", 9, 11)
	if _, ok := c.Get("big"); ok {
		t.Error("a value beyond the budget is kept")
	}
	c.Remove("a")
	if c.Len() != 0 {
		t.Errorf("%d values kept after Remove", c.Len())
	}
}
