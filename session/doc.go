// Package session is modelwire's runtime: one session of a scenario
// against a provider, and its timeline.
//
// It owns the engine and its loop (Config, Setup, New, Run: encode a
// turn, check its token budget, send it, gate and run the proposed tool
// calls, feed the results back, regenerate within the chapter's budget),
// the scenario a run plays (sources, tools and their executors, business
// rules as expressions, facts, variants, teaching notes) and the five
// validation layers that judge each answer; the fork that re-sends an
// application's own requests (Resend); and the timeline: the journal that
// records a session into the store and the replayer that folds a stored
// one back into the State a person sees, step by step.
//
// What is not about a session lives beside it: the protocols and what each
// one is (its descriptor: paths, key header, count endpoint, history and
// chain fields, where tool results sit) in adapters/ and its registry —
// session names no protocol; how a request reaches a provider (Provider,
// limits, retries, the HTTP client) in transport/; the model facts table
// and the cost rule in pricing/.
package session
