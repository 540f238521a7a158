package timeline

import "time"

// CheckCell is one cell of `modelwire check`'s matrix as the workbench
// reads it back from the store: a recorded session re-sent to one
// target, its child's verdict beside the recording's, and what
// regressed. It is plain data, so that the workbench (which sees the
// store only through its Library) and app (which judges the cells with
// package check) can share it.
type CheckCell struct {
	// Recording is the recorded session's id, Child the session the
	// check stored under it (a fork from turn 1), Target the target as
	// given to --to.
	Recording, Child, Target string
	// RecordingProtocol, RecordingVerdict and RecordingLayer are the
	// recording's protocol, verdict (pass or fail) and first failing
	// layer ("" when none).
	RecordingProtocol, RecordingVerdict, RecordingLayer string
	// Status is the child's verdict: pass, fail, or error when it
	// recorded no verdict (it broke off before one); FailedLayer its first
	// failing layer.
	Status, FailedLayer string
	// Protocol, Provider and Model are the child's.
	Protocol, Provider, Model string
	// Regressions name each layer and capability the recording passed
	// and the child did not ("layer:domain", "capability:usage_present").
	Regressions []string
	// CreatedAt is when the child was made: a newer check of the same
	// recording and target replaces an older one in the matrix.
	CreatedAt time.Time
}

// Regressed reports whether the child lost something the recording had.
func (c CheckCell) Regressed() bool { return len(c.Regressions) > 0 || c.Status == "error" }
