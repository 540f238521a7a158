package vcr_test

// The README's Go example, as it is printed there; its cassette,
// testdata/cassettes/refund-answer.jsonl, was recorded from `modelwire
// serve` with MODELWIRE_VCR=record, and replays offline.

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/modelwire/modelwire/vcr"
)

func TestRefundAnswer(t *testing.T) {
	rec := vcr.New(t, "testdata/cassettes/refund-answer") // replays; MODELWIRE_VCR=record records
	base := os.Getenv("OPENAI_BASE_URL")                  // recording: modelwire serve's
	if base == "" {
		base = "http://127.0.0.1:8787/v1"
	}
	client := openai.NewClient(option.WithBaseURL(base), option.WithAPIKey("sk-test"), option.WithHTTPClient(rec.Client()))
	r, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model:    "refund-model",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Order O-2048 line L1: may I get a refund of 150 CNY?")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Choices[0].Message.Content, "refund") {
		t.Errorf("the answer: %s", r.Choices[0].Message.Content)
	}
}
