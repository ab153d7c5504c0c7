package config

// Tools is how the generation endpoints treat the tools clients send.
type Tools struct {
	// Hosted is what a hosted tool the agent cannot run (web_search,
	// file_search, code_interpreter, mcp, computer and shell types …) does
	// to a Responses request: "withhold" (the default) serves the request
	// without offering it to the model, records and counts it; "refuse"
	// answers 400 unsupported_parameter naming it.
	Hosted string `yaml:"hosted"`
}

// Values of tools.hosted.
const (
	HostedWithhold = "withhold"
	HostedRefuse   = "refuse"
)

func (t *Tools) applyDefaults() {
	if t.Hosted == "" {
		t.Hosted = HostedWithhold
	}
}

func (t *Tools) validate(bad func(field, format string, args ...any)) {
	if t.Hosted != HostedWithhold && t.Hosted != HostedRefuse {
		bad("tools.hosted", "want withhold or refuse, got %q", t.Hosted)
	}
}
