package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/modelwire/modelwire/session"
)

// terminalDecider asks a person on the terminal about each proposal:
// approve, edit in $EDITOR (as git does), or reject with a reason.
type terminalDecider struct {
	in       io.Reader
	out      io.Writer
	scenario *session.Scenario
	lines    *bufio.Reader
	all      bool // "approve all" for the rest of the session
	// lineEdit: with neither $VISUAL nor $EDITOR set, an edit is one line
	// of JSON typed here (the proxy, whose terminal is its log) instead of vi.
	lineEdit bool
	// draft is the last edit of call draftFor, offered again when it was
	// refused (not JSON, or failing the schema): the person's work is kept.
	draft    []byte
	draftFor string
}

// edit gets edited content: $VISUAL or $EDITOR, else one line of JSON when
// lineEdit, else vi.
func (d *terminalDecider) edit(ctx context.Context, content []byte) ([]byte, error) {
	if d.lineEdit && os.Getenv("VISUAL") == "" && os.Getenv("EDITOR") == "" {
		fmt.Fprint(d.out, "new value, one line of JSON ($EDITOR is unset): ")
		line, err := d.readLine()
		if err != nil {
			return nil, fmt.Errorf("no answer on the terminal: %v", err)
		}
		return []byte(line), nil
	}
	return editInEditor(ctx, content)
}

func (d *terminalDecider) readLine() (string, error) {
	if d.lines == nil {
		d.lines = bufio.NewReader(d.in)
	}
	s, err := d.lines.ReadString('\n')
	if err != nil && s == "" {
		return "", err
	}
	return strings.TrimSpace(s), nil
}

// Decide implements session.Decider.
func (d *terminalDecider) Decide(ctx context.Context, p session.Proposal) (session.Decision, error) {
	if d.all && p.Valid() {
		return session.Decision{Kind: session.Approved}, nil
	}
	var pretty bytes.Buffer
	_ = json.Indent(&pretty, p.Arguments, "  ", "  ")
	fmt.Fprintf(d.out, "\n%s proposes %s (%s), call %d of %d:\n  %s\n", "the model", p.Name, p.CallID, p.Index+1, p.Of, pretty.String())
	if !p.Known {
		fmt.Fprintf(d.out, "  ! the scenario has no tool %q\n", p.Name)
	}
	for _, v := range p.Violations {
		fmt.Fprintf(d.out, "  ! schema: %s\n", v)
	}
	if p.EditError != "" {
		fmt.Fprintf(d.out, "  ! your edit was not accepted: %s\n", p.EditError)
	}
	for {
		if p.NoEdit {
			fmt.Fprint(d.out, "[a]pprove, [A]pprove all, [r]eject? ")
		} else {
			fmt.Fprint(d.out, "[a]pprove, [A]pprove all, [e]dit, [r]eject? ")
		}
		ans, err := d.readLine()
		if err != nil {
			return session.Decision{}, fmt.Errorf("no answer on the terminal: %v", err)
		}
		switch ans {
		case "a", "approve":
			return session.Decision{Kind: session.Approved}, nil
		case "A":
			d.all = true
			return session.Decision{Kind: session.Approved}, nil
		case "e", "edit":
			if p.NoEdit {
				fmt.Fprintf(d.out, "  ! %s\n", session.EditUnavailable)
				continue
			}
			content := pretty.Bytes()
			if d.draftFor == p.CallID && d.draft != nil {
				content = d.draft
			}
			edited, err := d.edit(ctx, content)
			if err != nil {
				fmt.Fprintf(d.out, "  ! %v\n", err)
				continue
			}
			d.draft, d.draftFor = edited, p.CallID
			if _, err := d.scenario.CheckEdit(p.Name, edited); err != nil {
				fmt.Fprintf(d.out, "  ! %v\n", err)
				continue
			}
			return session.Decision{Kind: session.Edited, Arguments: edited}, nil
		case "r", "reject":
			fmt.Fprint(d.out, "reason: ")
			reason, _ := d.readLine()
			if reason == "" {
				reason = "rejected by the operator"
			}
			return session.Decision{Kind: session.Rejected, Reason: reason}, nil
		}
	}
}

// editInEditor opens content in $VISUAL or $EDITOR (vi if neither) and
// returns what was saved. The temporary file is removed afterwards.
func editInEditor(ctx context.Context, content []byte) ([]byte, error) {
	editor := os.Getenv("VISUAL")
	if editor == "" {
		editor = os.Getenv("EDITOR")
	}
	if editor == "" {
		editor = "vi"
	}
	f, err := os.CreateTemp("", "modelwire-args-*.json")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(append(content, '\n')); err != nil {
		f.Close()
		return nil, err
	}
	f.Close()
	// Like git, run the editor through the shell so "code --wait" works.
	cmd := exec.CommandContext(ctx, "sh", "-c", editor+` "$1"`, "editor", f.Name())
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("editor %s failed: %v", editor, err)
	}
	return os.ReadFile(f.Name())
}
