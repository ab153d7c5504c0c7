package contract

import "testing"

func TestChainKey(t *testing.T) {
	for stage, want := range map[string]string{StageMapRequest: "map_request", StageTranslate: "translate", StageRun: "", "": ""} {
		if got := ChainKey(stage); got != want {
			t.Errorf("ChainKey(%q) = %q, want %q", stage, got, want)
		}
	}
}

func TestPaging(t *testing.T) {
	p := Paging{Default: 20, Max: 100}
	for v, want := range map[string]int{"": 20, "1": 1, "100": 100, "37": 37} {
		if n, ok := p.Limit(v); !ok || n != want {
			t.Errorf("Limit(%q) = %d, %v, want %d", v, n, ok, want)
		}
	}
	for _, v := range []string{"0", "-1", "101", "1e2", "ten", " 5", "5 ", "0x10", "99999999999999999999"} {
		if n, ok := p.Limit(v); ok {
			t.Errorf("Limit(%q) = %d, accepted", v, n)
		}
	}
	for n, want := range map[int]int{-5: 20, 0: 20, 1: 1, 100: 100, 101: 100, 1000: 100} {
		if got := p.Clamp(n); got != want {
			t.Errorf("Clamp(%d) = %d, want %d", n, got, want)
		}
	}
	if got, want := p.Refusal(), "limit must be an integer from 1 to 100"; got != want {
		t.Errorf("Refusal() = %q, want %q", got, want)
	}
	for name, p := range map[string]Paging{"runs": RunsPaging, "input_items": InputItemsPaging, "conversation items": ConversationItemsPaging} {
		if p.Default < 1 || p.Default > p.Max {
			t.Errorf("%s paging %+v: the default must be from 1 to the maximum", name, p)
		}
	}
}

func TestEchoTable(t *testing.T) {
	seen := map[string]bool{}
	for i, f := range ResponseEcho {
		if f.Name == "" || f.Default == "" {
			t.Fatalf("ResponseEcho[%d] = %+v: a field needs a name and a default", i, f)
		}
		if seen[f.Name] {
			t.Errorf("%s is in ResponseEcho twice", f.Name)
		}
		seen[f.Name] = true
		if EchoIndex(f.Name) != i {
			t.Errorf("EchoIndex(%q) = %d, want %d", f.Name, EchoIndex(f.Name), i)
		}
	}
	if EchoIndex("output") != -1 || EchoIndex("") != -1 {
		t.Error("EchoIndex of a field that is not echoed is not -1")
	}
}
