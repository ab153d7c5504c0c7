package compat

// Fragments of the Responses output message, shared by the final Response
// object and the stream events so both spell the item identically. An output
// message is written as
//
//	outputItemHead + id + outputItemCompleted + text + outputTextTail
const (
	outputItemHead       = `{"id":`
	outputItemCompleted  = `,"type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":`
	outputItemIncomplete = `,"type":"message","status":"incomplete","role":"assistant","content":[{"type":"output_text","text":`
	outputItemAdded      = `,"type":"message","status":"in_progress","role":"assistant","content":[]}`
	outputTextTail       = `,"annotations":[],"logprobs":[]}]}`
	outputTextPartHead   = `{"type":"output_text","text":`
	outputTextPartTail   = `,"annotations":[],"logprobs":[]}`
)
