package native

// Content parts beyond text, and replayed reasoning. Clients send images,
// files and audio as parts of a user message (Responses input_image,
// input_file, input_audio; chat image_url, file, input_audio); a mapping
// writes them in this one form, whatever the endpoint, and a provider
// writes them in its upstream's form. The JSON tags are part of the plugin
// ABI.

// Part kinds (Part.Type).
const (
	PartText  = "text"
	PartImage = "image"
	PartFile  = "file"
	PartAudio = "audio"
)

// Part is one content part of a message.
type Part struct {
	Type string `json:"type"`
	// Text is a text part's text.
	Text string `json:"text,omitempty"`
	// URL is an image's URL (https: or a data: URL), or a file's URL
	// (Responses input_file.file_url).
	URL string `json:"url,omitempty"`
	// Detail is an image's detail ("low", "high", "auto"), "" when unset.
	Detail string `json:"detail,omitempty"`
	// Data is a file's content as the client sent it (file_data: a data:
	// URL or base64), or audio as base64.
	Data string `json:"data,omitempty"`
	// Filename is a file's name, when given.
	Filename string `json:"filename,omitempty"`
	// Format is audio's format ("wav", "mp3").
	Format string `json:"format,omitempty"`
}

// RoleReasoning is the role of a message that stands for a reasoning item.
const RoleReasoning = "reasoning"

// Reasoning is a reasoning item: the model's summary of its reasoning, its
// reasoning text when an upstream gives it, and encrypted_content, an
// opaque carrier some providers return and expect back.
type Reasoning struct {
	// ID is the item's id as the client sent it (rs_…), "" when none.
	ID               string   `json:"id,omitempty"`
	Summary          []string `json:"summary,omitempty"`
	Content          []string `json:"content,omitempty"`
	EncryptedContent string   `json:"encrypted_content,omitempty"`
	// Opened is the reasoning text EncryptedContent sealed, when this
	// service sealed it for the tenant (include
	// reasoning.encrypted_content): set by the host's compaction stage,
	// never by a mapping, and sent upstream as the reasoning_content of
	// the assistant message that follows the item.
	Opened string `json:"opened,omitempty"`
}
