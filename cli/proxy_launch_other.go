//go:build !(linux || darwin)

package cli

import "os"

// terminalSentToGroup: where the foreground process group cannot be
// asked, every signal is forwarded.
func terminalSentToGroup(*os.File) bool { return false }
