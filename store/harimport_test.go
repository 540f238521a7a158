package store_test

import (
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
)

func init() { store.SetHARImporter(session.ImportHAR) }
