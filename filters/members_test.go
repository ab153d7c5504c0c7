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

// The ends of the strings the model stage found hold for the body it
// read only: a stage that replaces the body (the same length, or none)
// leaves the mapping to find the ends of the new one's strings itself.
func TestStringEndsForTheBodyRead(t *testing.T) {
	body := []byte(`{"a":"0123456789"}`)
	x := &Exchange{Body: body}
	x.SetStringEnds([]uint32{5, 17})
	if x.StringEnds() != nil {
		t.Fatal("ends without members recorded")
	}
	x.SetMembers(func(add func(key, raw string, at int)) bool { add("a", `"0123456789"`, 5); return true })
	x.SetStringEnds([]uint32{5, 17})
	if got := x.StringEnds(); len(got) != 2 || got[0] != 5 || got[1] != 17 {
		t.Fatalf("ends for the body read: %v", got)
	}
	x.Body = []byte(`{"a":"01234","b":1}`) // as long, another string
	if x.StringEnds() != nil {
		t.Fatal("ends for another body of the same length")
	}
	x.Body = body[:len(body)-1]
	if x.StringEnds() != nil {
		t.Fatal("ends for a part of the body")
	}
	x.Body = body
	x.DropBody()
	if x.StringEnds() != nil {
		t.Fatal("ends after the body was dropped")
	}
}
