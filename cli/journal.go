package cli

import (
	"github.com/modelwire/modelwire/session"
)

// openJournal opens the session store for a run. TODO(store): wire the
// SQLite journal once the store lands.
func openJournal(app *App, sc *session.Scenario, f runFlags, prov session.Provider) (session.Journal, func(), error) {
	return nil, func() {}, nil
}
