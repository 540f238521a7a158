// Package timeline owns a session's timeline: how a session is recorded
// and how it is replayed.
//
// Recording: every session — `run`, the workbench, the proxy, an imported
// transcript or HAR capture — is stored through StoreJournal, which turns
// the engine's session.Update values into stored events (attempts, raw and
// canonical events, decisions, tool results, verdicts) written through
// the store. It implements session.Journal, the interface the engine
// records through; session never imports this package.
//
// Replaying: Replayer steps through a stored session — seek to entry N,
// next or previous entry or turn, counts, turn starts — folding the same
// session.State a live session folds (session.State.Apply), so the
// workbench and `modelwire replay` agree on the order of entries, their
// count and where turns start. Opening reads no entry; a step back or a
// jump replays from the nearest checkpoint (a copy-on-write clone of the
// state); a long session keeps only the shown turn's lanes and event log
// and folds earlier turns from the attempts' records. Marks finds the
// scrubber's proposals and errors.
package timeline
