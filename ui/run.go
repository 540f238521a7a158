package ui

import (
	"context"

	tea "github.com/charmbracelet/bubbletea"
)

// Run opens the workbench and returns when the person quits or ctx ends
// (a stop signal). The terminal is restored on every path out: a normal
// quit, ctrl+c, a signal, and a panic (Bubble Tea catches panics in Update and in
// commands and restores the terminal before it returns the error).
func Run(ctx context.Context, opts Options, extra ...tea.ProgramOption) error {
	m := New(opts)
	defer m.Close()
	// Signals reach the workbench through ctx (the command's notifyStop):
	// Bubble Tea's own handler, racing it on SIGTERM, could leave Run
	// waiting for a handler blocked on a message nobody reads.
	popts := append([]tea.ProgramOption{tea.WithAltScreen(), tea.WithContext(ctx), tea.WithoutSignalHandler()}, extra...)
	p := tea.NewProgram(m, popts...)
	m.br.start(p.Send)
	_, err := p.Run()
	if err == tea.ErrProgramKilled && ctx.Err() != nil {
		return nil
	}
	return err
}
