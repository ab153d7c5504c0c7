package contract

// ModelID is the only model runedge serves: what the model stage requires
// in a request's "model", what /v1/models lists, what every reply, run and
// x-service-model-id names.
const ModelID = "service"

// Endpoint names: recorded on each run (its "endpoint"), passed to mapping
// plugins in their input's "endpoint", keyed chains in the configuration
// file and xDS, and label metrics and access log lines.
const (
	// EndpointChat is POST /v1/chat/completions.
	EndpointChat = "chat.completions"
	// EndpointResponses is POST /v1/responses, and each turn of a
	// WebSocket on GET /v1/responses (a turn is a Responses run).
	EndpointResponses = "responses"
	// EndpointCompact is POST /v1/responses/compact: recorded on
	// compaction runs, whose requests are mapped as Responses requests.
	EndpointCompact = "responses.compact"
	// EndpointInputTokens is POST /v1/responses/input_tokens; it creates
	// no run.
	EndpointInputTokens = "responses.input_tokens"
	// EndpointConversations is the Conversations API (/v1/conversations…),
	// which creates no run.
	EndpointConversations = "conversations"
	// EndpointModels is /v1/models.
	EndpointModels = "models"
	// EndpointNative is the runner's own API (/runner/v1/runs…).
	EndpointNative = "runner"
)

// Stage names, as stages name themselves (filters.Stage.Name), as the
// chain orders name them (filters/builtin) and in stage keys
// ("responses/translate") and `runedge plugin swap`.
const (
	StageAuth          = "auth"
	StageBody          = "body"
	StageModel         = "model"
	StageConversation  = "conversation"
	StageMapRequest    = "map-request"
	StageCompactInput  = "compact-input"
	StageCompaction    = "compaction"
	StageNativeRequest = "native-request"
	StageRun           = "run"
	StageTranslate     = "translate"
)

// The keys of the two plugin stages in a chain of the configuration file
// (chains.<endpoint>.map_request) and of an ECDS chain resource. YAML keys
// are spelled with underscores; the stage names above keep their hyphen,
// which the CLI and stage keys already show. ChainKey maps one to the
// other.
const (
	ChainKeyMapRequest = "map_request"
	ChainKeyTranslate  = "translate"
)

// ChainKey returns the configuration key of a plugin stage, "" for a stage
// that takes no plugin.
func ChainKey(stage string) string {
	switch stage {
	case StageMapRequest:
		return ChainKeyMapRequest
	case StageTranslate:
		return ChainKeyTranslate
	}
	return ""
}
