// Package jsonschema owns modelwire's JSON Schema validator and the JSON
// value model it reads with: ParseJSON (one JSON value, numbers kept
// exact as json.Number), JSON Pointer tokens and lookup, exact number
// comparison and JSON equality. Tool arguments, the output contract and
// the scenario file format are all checked with it, and diff, vcr, ui,
// app and proxy read bodies with ParseJSON. It imports nothing of the
// module: every layer may call it.
//
// The validator is our own. The library we used before compiled every
// draft's metaschema in its package init (~12 ms, 1.7 MB at every start,
// issue 20); this one costs nothing until a schema is compiled.
//
// It reads the two drafts tool schemas are written in: 2020-12 (the
// default when $schema is absent) and draft-07, for every assertion and
// applicator keyword and local $refs. A $schema naming any other draft
// (03, 04, 06, 2019-09) is refused at compile time in one line that names
// the draft and the two supported. What it cannot do ($dynamicRef,
// $recursiveRef, remote refs, refs inside an embedded resource) it
// refuses the same way, with the keyword's pointer: a schema that
// compiles is checked in full, never partly.
// Checks on the schema's own shape stand in for the metaschema: a keyword
// of the wrong type is a compile error, as the metaschema made it.
// format is an annotation only: it is never asserted.
//
// The official JSON-Schema-Test-Suite's draft2020-12 and draft7 cases run
// in go test (TestSchemaSuite), from a copy pinned by Go module version
// and checksum: no wrong verdict is allowed, and each draft must pass at
// least as many cases as it did when measured.
//
// The files: schema.go (the API), compile.go and keywords.go (schema to
// nodes), validate.go and validate_types.go (an instance against nodes),
// number.go and value.go (the value model), json.go (ParseJSON, pointers),
// errors.go (compile errors and the violations' wording).
package jsonschema
