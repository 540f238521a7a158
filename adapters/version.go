package adapters

// Version is the adapters' version, recorded in every session's manifest
// (adapter_version): it changes when what an adapter sends for the same
// canonical request, or reads from the same response, changes — a new
// field mapped, a degradation recorded differently — so two runs can tell
// a model's change from modelwire's.
const Version = "1"
