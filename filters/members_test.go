package filters

import "testing"

// TestPlainStringsForTheBodyRead: what the model stage found of a body's
// strings holds for that body only: a stage that replaces the body (a
// conversation's items put before the input) leaves it unsaid.
func TestPlainStringsForTheBodyRead(t *testing.T) {
	x := &Exchange{Body: []byte(`{"a":"b\n"}`)}
	x.SetPlainStrings()
	if x.PlainStrings() {
		t.Fatal("plain without members recorded")
	}
	x.SetMembers(func(add func(key, raw string, at int)) bool { add("a", `"b\n"`, 5); return true })
	x.SetPlainStrings()
	if !x.PlainStrings() {
		t.Fatal("not plain for the body read")
	}
	x.Body = []byte(`{"a":"\u00e9"}`)
	if x.PlainStrings() {
		t.Fatal("plain for another body")
	}
	x.Body = nil
	if x.PlainStrings() {
		t.Fatal("plain without a body")
	}
}
