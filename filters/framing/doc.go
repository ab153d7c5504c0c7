// Package framing builds the JSON of the host's own stream frames: the
// chat.completion.chunk objects of a streamed chat completion and the
// Responses streaming events around the text (created, item and part
// added/done, text deltas, completed). The reply bodies themselves — the
// chat.completion and Response objects — come from the mapping plugin; what
// is here never changes with the plugin, so a long stream costs no
// WebAssembly call per token.
//
// Every Append… method appends to dst and, with room in dst, allocates
// nothing: they run once per streamed token. The SSE framing around them
// ("event:", "data:") is written by filters.Reply.
package framing
