package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/batch"
	"github.com/modelwire/modelwire/har"
	"github.com/modelwire/modelwire/jsonl"
	"github.com/modelwire/modelwire/store"
)

func init() {
	register(newExportCmd)
	register(newImportCmd)
}

func newExportCmd(app *App) *cobra.Command {
	var format, output, endpoint string
	var force, content bool
	var turn int
	cmd := &cobra.Command{
		Use:   "export ID [--format jsonl|har|otlp|curl|python|ts|http] [--turn N] [-o FILE] [--endpoint URL]",
		Short: "Write a stored session as JSON Lines or as a HAR file, or send it as an OpenTelemetry trace",
		Long: `Export a stored session (ID or a unique prefix of one).

jsonl (the default) is modelwire's own format: the session, its attempts and its
whole timeline, raw and canonical events as stored. modelwire import reads it back
into any database with an identical timeline.

har is an HTTP Archive 1.2, one entry per HTTP attempt with its request and its
response (a streamed response as its SSE stream), for browsers' devtools, HAR
viewers and other tools. Keys are redacted in both, as they are in the database.

otlp sends the session to an OpenTelemetry backend (Jaeger, Tempo, an
OTel Collector…) over OTLP/HTTP as one trace in the GenAI semantic conventions:
a span per model call, a span per tool execution, the validation layers as span
events. --endpoint is the OTLP/HTTP base URL (default: $OTEL_EXPORTER_OTLP_ENDPOINT);
prompts, answers and tool arguments are only sent with --otel-content; keys never.

curl, python, ts and http copy the requests out (each turn's, or --turn N's, as
last sent): a curl command, a Python or TypeScript snippet (the official OpenAI or
Anthropic SDK; Gemini's as the REST call), or a raw .http file (VS Code REST
Client, JetBrains). The key is always read from the provider's environment
variable ($OPENAI_API_KEY…), never written out. A simulator session points at
modelwire serve's address, http://127.0.0.1:8787.

Without -o the export goes to standard output. -o names a file, or a directory
(existing, or ending in /) to write ID.jsonl or ID.har into; a directory that
does not exist is refused, never created. An existing file is only replaced
with --force.`,
		Example: `  modelwire export 01jd3k -o refund.jsonl
  modelwire export 01jd3k --format har -o ~/captures/
  modelwire export 01jd3k --format otlp --endpoint http://127.0.0.1:4318
  modelwire export 01jd3k --format curl --turn 3 | sh
  modelwire export 01jd3k --format python --turn 1 -o turn1.py`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format == "otlp" {
				return exportOTLP(cmd.Context(), app, args[0], endpoint, content)
			}
			if format != "jsonl" && format != "har" && !isSnippet(format) {
				return usageErr("--format %q: want jsonl, har, otlp, curl, python, ts or http", format)
			}
			if turn != 0 && !isSnippet(format) {
				return usageErr("--turn applies to curl, python, ts and http, which copy out one request")
			}
			db, id, err := resolveSession(app, args[0])
			if err != nil {
				return err
			}
			defer db.Close()
			if output != "" && output != "-" {
				if output, err = exportPath(output, id, format, force); err != nil {
					return err
				}
				if err := refuseDatabase(output, app.DB); err != nil {
					return err
				}
			}
			write := func(w io.Writer) error {
				if isSnippet(format) {
					return exportSnippets(w, db, id, format, turn)
				}
				if format == "har" {
					return har.Export(db, w, id, Version)
				}
				return jsonl.Export(db, w, id)
			}
			if output == "" || output == "-" {
				return storeErr(write(app.Out))
			}
			return writeFileAtomic(output, write)
		},
	}
	cmd.Flags().StringVar(&format, "format", "jsonl", "jsonl, har, otlp, or a request to run elsewhere: curl, python, ts, http")
	cmd.Flags().IntVar(&turn, "turn", 0, "curl, python, ts, http: only this turn's request (default: every turn's)")
	cmd.Flags().StringVarP(&output, "output", "o", "", "write to FILE instead of standard output")
	cmd.Flags().BoolVar(&force, "force", false, "replace an existing -o file")
	cmd.Flags().StringVar(&endpoint, "endpoint", "", "otlp: the OTLP/HTTP base URL (default $OTEL_EXPORTER_OTLP_ENDPOINT)")
	cmd.Flags().BoolVar(&content, "otel-content", false, "otlp: include prompts, answers, tool arguments and results")
	return cmd
}

// exportPath is the file an export to output goes to: output itself, or
// ID.FORMAT inside it when it is a directory (existing, or written with a
// trailing slash). A missing directory is refused, as --db refuses one
// (checkParentDir); an existing file is refused without force.
func exportPath(output, id, format string, force bool) (string, error) {
	if st, err := os.Stat(output); (err == nil && st.IsDir()) || strings.HasSuffix(output, string(os.PathSeparator)) {
		output = filepath.Join(output, id+"."+format)
	}
	if st, err := os.Stat(output); err == nil {
		if st.IsDir() {
			return "", usageErr("%s is a directory", output)
		}
		if !force {
			return "", usageErr("%s exists; pass --force to overwrite it", output)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", usageErr("cannot write %s: %v", output, unwrapPathErr(err))
	}
	if err := checkParentDir("-o", output); err != nil {
		return "", err
	}
	return output, nil
}

// refuseDatabase refuses an output that is the database the command
// reads, or one of SQLite's files beside it (-wal, -shm, -journal),
// --force or not: the same file by os.SameFile when it exists, else the
// same resolved path.
func refuseDatabase(output, db string) error {
	if db == "" {
		return nil
	}
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		if samePath(output, db+suffix) {
			what := "the database"
			if suffix != "" {
				what = "the database's " + suffix[1:] + " file"
			}
			return usageErr("-o %s is %s this command reads (%s); nothing was written", output, what, db)
		}
	}
	return nil
}

// samePath: a and b name the same file (os.SameFile when both exist),
// or, when one does not exist yet, the same absolute path with the
// directory's symlinks resolved.
func samePath(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(sa, sb)
	}
	if errA == nil || errB == nil { // one exists, the other not
		return false
	}
	resolve := func(p string) string {
		abs, err := filepath.Abs(p)
		if err != nil {
			return p
		}
		if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
			return filepath.Join(dir, filepath.Base(abs))
		}
		return abs
	}
	return resolve(a) == resolve(b)
}

// writeFileAtomic writes path through a temporary file in the same
// directory, renamed into place only when complete: a failed export
// leaves nothing behind and never half-replaces a file.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return usageErr("cannot write %s: %v", path, unwrapPathErr(err))
	}
	defer os.Remove(tmp.Name())
	bw := bufio.NewWriterSize(tmp, 256<<10)
	if err := write(bw); err != nil {
		tmp.Close()
		return storeErr(err)
	}
	if err := bw.Flush(); err != nil {
		tmp.Close()
		return failedErr("writing %s: %v", path, err)
	}
	// CreateTemp makes the file private; an export is an ordinary file.
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return failedErr("writing %s: %v", path, err)
	}
	if err := tmp.Close(); err != nil {
		return failedErr("writing %s: %v", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return failedErr("writing %s: %v", path, err)
	}
	return nil
}

func newImportCmd(app *App) *cobra.Command {
	var format string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "import FILE [FILE…]",
		Short: "Import sessions from a modelwire JSONL export, a HAR file, a Claude Code transcript or a batch's files",
		Long: `Import sessions into the database.

A modelwire JSONL export (modelwire export) is imported as it was recorded; a
session the database already has is skipped, never overwritten.

A HAR file, as saved by a browser's devtools ("Save all as HAR") or by mitmproxy,
becomes one session per entry whose request is one of the protocols below, known
by its path (POST …/v1/responses, …/v1/chat/completions, …/chat/completions
(DeepSeek), …/v1/messages, …/v1beta/interactions, …/models/…:generateContent or
:streamGenerateContent). Its response is decoded with that protocol's adapter,
streamed bodies included. Other entries are skipped and counted. HAR keeps no
time per event: every event of a response is placed at its first byte.

A Claude Code transcript (claude -p … --output-format stream-json --verbose, or
--output-format json) becomes one session of protocol claude-code, which the
workbench's session browser (s) opens like any other.

A batch (OpenAI's Batch API) is imported from its files, named in any order and
each known by its content: the input file (a request a line, each with its
custom_id), the output and/or error file (a result a line, in any order) and,
optionally, the batch object (GET /v1/batches/{id} saved as JSON, which gives
the batch's id and status). Each custom_id becomes one session, request and
result paired by the id, titled "[BATCH_ID · STATUS] CUSTOM_ID"; a
request-level error is that session failed, not the batch.

The whole file is checked first: a malformed file imports nothing, and the error
names the line (JSONL, batch) or the entry (HAR).

HAR protocols: ` + strings.Join(registry.Protocols, ", ") + `.`,
		Example: `  modelwire import refund.jsonl
  modelwire import capture.har
  modelwire import requests.jsonl batch_output.jsonl batch_errors.jsonl batch.json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format == "batch" || len(args) > 1 {
				return importBatch(app, args, asJSON)
			}
			path := args[0]
			f, err := openImport(path)
			if err != nil {
				return err
			}
			defer f.Close()
			kind := format
			if kind == "" {
				if kind, err = sniffImport(f); err != nil {
					return usageErr("cannot read %s: %v", path, err)
				}
				if kind == "" {
					return usageErr("%s is neither a modelwire JSONL export, a HAR file nor a Claude Code transcript, nor one of a batch's files", path)
				}
				if kind == "batch" {
					return importBatch(app, args, asJSON)
				}
			} else if kind != "jsonl" && kind != "har" && kind != "claude-code" {
				return usageErr("--format %q: want jsonl, har, claude-code or batch", kind)
			}
			db, err := openForWrite(app)
			if err != nil {
				return err
			}
			defer db.Close()
			var res store.ImportResult
			switch kind {
			case "jsonl":
				res, err = jsonl.Import(db, f, path)
			case "claude-code":
				res, err = importTranscript(db, f, path)
			default:
				res, err = har.Import(db, f, path, registry.Lookup)
			}
			if err != nil {
				return storeErr(err)
			}
			return printImport(app, path, kind, res, asJSON)
		},
	}
	cmd.Flags().StringVar(&format, "format", "", "jsonl, har, claude-code or batch (default: from the files' content)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one object: the ids imported, sessions already present, entries skipped")
	return cmd
}

// printImport says what an import did: one object with --json, else a line.
func printImport(app *App, path, kind string, res store.ImportResult, asJSON bool) error {
	if asJSON {
		if res.Sessions == nil {
			res.Sessions = []string{}
		}
		enc := json.NewEncoder(app.Out)
		return enc.Encode(map[string]any{"imported": res.Sessions, "present": len(res.Present), "skipped": res.Skipped})
	}
	fmt.Fprintln(app.Out, importSummary(path, kind, res))
	return nil
}

// openImport opens a file to import; a missing file or a directory is a
// usage error naming it.
func openImport(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usageErr("cannot read %s: %v", path, unwrapPathErr(err))
	}
	if st, err := f.Stat(); err == nil && st.IsDir() {
		f.Close()
		return nil, usageErr("cannot read %s: it is a directory", path)
	}
	return f, nil
}

// importBatch imports a batch's files (batch.Import knows each by its
// content); nothing is stored when any of them is bad.
func importBatch(app *App, paths []string, asJSON bool) error {
	var files []batch.File
	for _, path := range paths {
		f, err := openImport(path)
		if err != nil {
			return err
		}
		defer f.Close()
		files = append(files, batch.File{Name: path, R: f})
	}
	db, err := openForWrite(app)
	if err != nil {
		return err
	}
	defer db.Close()
	res, err := batch.Import(db, files)
	if err != nil {
		return storeErr(err)
	}
	return printImport(app, strings.Join(paths, ", "), "batch", res, asJSON)
}

// sniffImport tells a JSONL export from a HAR file by its first bytes,
// and rewinds the file.
func sniffImport(f *os.File) (string, error) {
	head := make([]byte, 4096)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return "", err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	head = bytes.TrimLeft(bytes.TrimPrefix(head[:n], []byte("\xef\xbb\xbf")), " \t\r\n")
	line, _, _ := bytes.Cut(head, []byte("\n"))
	switch {
	case bytes.Contains(line, []byte(`"modelwire.export"`)):
		return "jsonl", nil
	case batch.Sniff(head) != batch.KindNone:
		return "batch", nil
	case bytes.HasPrefix(line, []byte("{")) && bytes.Contains(line, []byte(`"session_id"`)) && bytes.Contains(line, []byte(`"type"`)):
		// A Claude Code line: system init, stream_event, assistant, result.
		return "claude-code", nil
	case bytes.HasPrefix(head, []byte("{")):
		return "har", nil
	}
	return "", nil
}

func importSummary(path, kind string, res store.ImportResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "imported %d session(s) from %s", len(res.Sessions), path)
	if len(res.Sessions) > 0 {
		b.WriteString(": " + strings.Join(res.Sessions, " "))
	}
	if kind == "har" {
		fmt.Fprintf(&b, " (%d of %d HAR entries skipped: not one of the %s)", res.Skipped, res.Entries, protocolCount())
	}
	if len(res.Present) > 0 {
		fmt.Fprintf(&b, " (%d already in the database: %s)", len(res.Present), strings.Join(res.Present, " "))
	}
	return b.String()
}

// protocolCount is "the N protocols", counted from the registry's list:
// a protocol added there is counted here too (issue 27).
func protocolCount() string {
	return fmt.Sprintf("%d protocols", len(registry.Protocols))
}
