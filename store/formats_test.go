package store_test

import (
	"github.com/modelwire/modelwire/har"
	"github.com/modelwire/modelwire/jsonl"
	"github.com/modelwire/modelwire/store"
)

func init() { store.SetFormats(har.Import, jsonl.Import, jsonl.Export) }
