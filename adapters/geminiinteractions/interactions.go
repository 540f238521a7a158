// Package geminiinteractions is the wire-format adapter for Google's
// Interactions API: POST /v1beta/interactions, Gemini's recommended entry
// since its 2026-06 GA (generateContent is package gemini).
//
// Sources of the wire format (testdata/SOURCES.md lists them per capture):
// the Go SDK google.golang.org/genai v1.77.0 (package interactions, its
// models/interactions types and types/stream reader, API revision
// 2026-05-20), @google/genai 2.18.0 (sdk-samples/interactions_*), and the
// reference pages ai.google.dev/gemini-api/docs/streaming (the REST stream
// transcripts), /interactions-breaking-changes-may-2026 (outputs → steps,
// response_mime_type → response_format) and /api-errors (error codes).
//
// Encoding: system and developer sources become the one system_instruction
// string (the API has no developer role); the task and the labelled context
// material are the text contents of the first user_input step; tools are
// flat {"type":"function",name,description,parameters} declarations; the
// output schema is response_format {"type":"text","mime_type":
// "application/json","schema":…}; tool choice and limits live in
// generation_config. History "full" replays every turn's steps (thought with
// its signature, model_output, function_call with arguments as an object)
// and a function_result step per call; history "previous-response-id" sends
// previous_interaction_id and only the last turn's function_result steps
// (the server keeps the rest, as interactions are stored by default).
// system_instruction, tools and response_format are settings of each
// request, so they are sent every time.
//
// Decoding: the stream is SSE with event names; every data object names its
// own event_type: interaction.created, interaction.status_update, then per
// step step.start (the step's type; a function_call's id and name), step.delta
// (text, thought_summary, thought_signature, arguments_delta, …) and
// step.stop, then interaction.completed (status and usage, no steps), and
// `event: done` / `data: [DONE]`. Each step is one canonical item. The
// non-streaming body is the Interaction with its steps; the interaction
// status decides the terminal (requires_action: the model stopped for tool
// calls).
package geminiinteractions

import "github.com/modelwire/modelwire/adapters"

// APIRevision pins the response schema (steps, not the removed outputs);
// go-genai v1.77.0 sends the same value.
const APIRevision = "2026-05-20"

// Path is where interactions are created.
const Path = "/v1beta/interactions"

// Protocol is the Interactions API adapter.
type Protocol struct{}

// New returns the Interactions API adapter.
func New() adapters.Protocol { return Protocol{} }

// Name is the contract name "gemini-interactions".
func (Protocol) Name() string { return adapters.GeminiInteractions }

// Framing is SSE with event names.
func (Protocol) Framing() adapters.Framing { return adapters.FramingSSE }

// NewDecoder starts decoding one streamed interaction.
func (Protocol) NewDecoder() adapters.Decoder { return &decoder{} }
