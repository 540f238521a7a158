#!/bin/sh
# Renders the README's screenshots from the real workbench: the binary runs
# in a 120x36 tmux pane with 256 colours, keys are sent as a person would,
# the pane is captured with its colours and drawn as PNG.
# Run from the repository root: sh docs/screens/capture.sh
# freeze writes the pane as SVG; docs/screens/grid puts each character on
# the terminal's cell grid (freeze's flowing text drifts after Chinese
# text); rsvg-convert draws it, finding a CJK font for the Chinese through
# fontconfig. On Debian: apt-get install fonts-noto-cjk librsvg2-bin
# (fonts-symbola for the ⏸ glyph). FONT_FAMILY names another monospace font.
set -eu
font=${FONT_FAMILY:-DejaVu Sans Mono}
command -v rsvg-convert >/dev/null || { echo "rsvg-convert is missing (apt-get install librsvg2-bin)" >&2; exit 1; }
fc-list :lang=zh family | grep -q . || { echo "no Chinese font (apt-get install fonts-noto-cjk)" >&2; exit 1; }
out=docs/screens
tmp=$(mktemp -d)
trap 'tmux -S "$tmp/sock" kill-server 2>/dev/null || true; rm -rf "$tmp"' EXIT
go build -o "$tmp/modelwire" .
go build -o "$tmp/grid" ./docs/screens/grid
t() { tmux -S "$tmp/sock" "$@"; }
# One key at a time: keys that arrive in one read reach the program as
# one message ("En"), as fast typing does.
k() { for key in "$@"; do t send-keys -t mw "$key"; sleep 0.3; done; }
shot() { # name: capture the pane and draw it
	t capture-pane -e -p -t mw > "$tmp/$1.ansi"
	go run github.com/charmbracelet/freeze@v0.2.2 --language ansi --window=false --padding 10 \
		--font.size 13 --font.family "$font" --background '#1e2127' -o "$tmp/$1.svg" "$tmp/$1.ansi"
	"$tmp/grid" < "$tmp/$1.svg" > "$tmp/$1.grid.svg"
	rsvg-convert --zoom 2 -o "$out/$1.png" "$tmp/$1.grid.svg"
}
wait_for() { # text: poll the pane until it shows text
	i=0
	until t capture-pane -p -t mw | grep -qF -- "$1"; do
		i=$((i + 1)); [ $i -lt 200 ] || { echo "timed out waiting for $1" >&2; exit 1; }
		sleep 0.1
	done
}
t new-session -d -s mw -x 120 -y 36 "TERM=xterm-256color XDG_STATE_HOME=$tmp $tmp/modelwire --db $tmp/mw.db --pace 0"
wait_for "⏸ assembled"
t send-keys -t mw n; wait_for "⏸ sent"
t send-keys -t mw n; wait_for "⏸ first"
t send-keys -t mw n; wait_for "⏸ proposals"
t send-keys -t mw E; wait_for "why:"
shot walkthrough
k E n; wait_for "Tool proposal"
t send-keys -t mw A
i=0 # to the end: n at every pause, A at every proposal; d on turn 3's request
changes=
until t capture-pane -p -t mw | grep -qF "⏸ validated"; do
	if [ -z "$changes" ] && t capture-pane -p -t mw | grep -qF "⏸ assembled · turn 3"; then
		t send-keys -t mw d; wait_for "What turn 3"
		shot changes
		k Escape
		changes=1
	fi
	if t capture-pane -p -t mw | grep -qF "Tool proposal"; then t send-keys -t mw A; else t send-keys -t mw n; fi
	i=$((i + 1)); [ $i -lt 100 ] || { echo "the walkthrough did not end" >&2; exit 1; }
	sleep 0.2
done
k BTab i; wait_for "Inspect"
shot inspector
k Escape n; wait_for "✓ done"
t send-keys -t mw s; wait_for "Sessions (1)"
t send-keys -t mw Enter; wait_for "modelwire replay"
t send-keys -t mw G; wait_for "5/5 pass"
k Left Left Left Left Left Left Left Left
sleep 0.5
shot replay
chmod 644 "$out"/*.png
