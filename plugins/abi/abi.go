package abi

import "github.com/runedge/runedge/internal/contract"

// Version is the version of the ABI, returned by a plugin's
// runedge_abi_version. The host refuses a plugin that returns anything else.
// Changes that existing plugins or hosts cannot handle get a new version;
// optional exports and new input fields do not.
const Version = 1

// Names of the guest exports.
const (
	ExportMemory     = "memory"
	ExportABIVersion = "runedge_abi_version"
	ExportHooks      = "runedge_hooks"
	ExportAlloc      = "runedge_alloc"
	ExportOutput     = "runedge_output"
	ExportVersion    = "runedge_version"
	ExportMapRequest = "runedge_map_request"
	ExportMapResult  = "runedge_map_result"
	ExportSelfTest   = "runedge_self_test"
	ExportMapStream  = "runedge_map_stream"
)

// Bits of runedge_hooks: the hooks a plugin implements.
const (
	HookMapRequest int32 = 1 << 0
	HookMapResult  int32 = 1 << 1
	HookSelfTest   int32 = 1 << 2
	HookMapStream  int32 = 1 << 3
	// KnownHooks are the bits this version defines; a plugin setting any
	// other bit is refused rather than silently never called.
	KnownHooks = HookMapRequest | HookMapResult | HookSelfTest | HookMapStream
	// MappingHooks are the hooks that map something; a plugin needs one.
	MappingHooks = HookMapRequest | HookMapResult | HookMapStream
)

// Statuses a hook returns.
const (
	// StatusOK: the output is the mapped bytes.
	StatusOK = 0
	// StatusInvalid: the input is invalid through the client's fault; the
	// output is an InputError body and the client gets HTTP 400.
	StatusInvalid = 1
	// StatusFailed: the plugin failed; the output is a message for
	// operators and the client gets HTTP 500 plugin_error.
	StatusFailed = 2
)

// The endpoints the host names in an input's "endpoint" (internal/contract
// names them).
const (
	EndpointChat      = contract.EndpointChat
	EndpointResponses = contract.EndpointResponses
)

// Result statuses of a map_result input.
const (
	// ResultCompleted asks for the final reply.
	ResultCompleted = "completed"
	// ResultInProgress asks for the in-progress Response carried by
	// response.created, or of a stored response read while it runs: no
	// output, no usage.
	ResultInProgress = "in_progress"
	// ResultQueued, ResultCancelled and ResultFailed ask for the Response
	// of a stored response read back (GET /v1/responses/{id}, a cancel)
	// before its final object exists: no output.
	ResultQueued    = "queued"
	ResultCancelled = "cancelled"
	ResultFailed    = "failed"
)
