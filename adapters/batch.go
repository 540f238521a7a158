package adapters

// BatchEndpoint is a provider's asynchronous batch API: a JSONL file of
// requests uploaded, a batch created over it, its output and error files
// read back, each line matched to its request by a custom id.
type BatchEndpoint struct {
	// Files is the files collection: POST (multipart upload), GET /{id},
	// GET /{id}/content.
	Files string
	// Batches is the batches collection: POST, GET (list), GET /{id},
	// POST /{id}/cancel.
	Batches string
	// Purpose is the upload purpose a batch's input file must have;
	// OutputPurpose is the purpose of the files a batch writes.
	Purpose, OutputPurpose string
	// Windows are the completion windows a batch may ask for.
	Windows []string
	// FilePrefix, BatchPrefix and RequestPrefix begin the ids the
	// provider issues for a file, a batch and one line's request.
	FilePrefix, BatchPrefix, RequestPrefix string
}

// OpenAIBatch is OpenAI's Files and Batch API, shared by Responses and
// Chat Completions (a batch's lines go to either).
var OpenAIBatch = &BatchEndpoint{Files: "/v1/files", Batches: "/v1/batches", Purpose: "batch", OutputPurpose: "batch_output",
	Windows: []string{"24h"}, FilePrefix: "file-", BatchPrefix: "batch_", RequestPrefix: "batch_req_"}
