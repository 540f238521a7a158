package ui

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestE2EPromptEdit edits the task's amount in the workbench, as a person
// debugging a prompt would (150 元 → 120 元), re-sends it and reads the
// answer and the simulated model's reason from the screen: the answer
// follows the words, the domain checks read the same words, and the
// teaching line names what the model read.
func TestE2EPromptEdit(t *testing.T) {
	bin := e2eBinary(t)
	const task = "帮我核查订单 O-2048 中商品 L1 的 150 元退款申请。确认适用规则和当前可退上限，给客服一段中文回复草稿。只做核查，不提交退款，不发消息。"
	after := utf8.RuneCountInString(task[strings.Index(task, "150")+3:])
	eachTerminal(t, "mwedit", func(t *testing.T, tm *tmux, dir, db string) {
		tm.start(bin, db, dir, "--pace", "0")
		tm.waitFor("the walkthrough", 20*time.Second, has("⏸ assembled"))
		tm.waitFor("the assembly's focus", 10*time.Second, has("◆ Assembly"))
		tm.send("j", "j") // system rules, skill, the task
		tm.send("Enter")
		tm.waitFor("the task in the editor", 10*time.Second, has("Edit source", "帮我核查订单"))
		for range after {
			tm.send("Left")
		}
		tm.send("BSpace", "BSpace")
		tm.sendText("20")
		tm.waitFor("the edited amount", 10*time.Second, has("120 元"))
		tm.send("C-s")
		s := tm.waitFor("the re-sent request", 20*time.Second, func(s string) bool {
			return strings.Contains(s, "⏸ assembled") && !strings.Contains(s, "Edit source")
		})
		s = walkOn(t, tm, s, "")
		if !strings.Contains(s, "5/5 pass") {
			t.Fatalf("the edited task's answer does not pass:\n%s", s)
		}
		// The answer, whole, in the values view.
		tm.send("v")
		tm.waitFor("the values view", 10*time.Second, has("Values ·"))
		tm.send("2")
		tm.waitFor("the answer with the edited amount", 10*time.Second, has("requested_refund_cents 12000", "本次申请的120元"))
		tm.send("Escape")
		tm.waitFor("the view to close", 10*time.Second, func(s string) bool { return !strings.Contains(s, "Values ·") })
		// Teaching mode on the stream or validation panel names what the
		// model read.
		tm.send("E")
		for i := 0; !has("model:")(tm.capture()); i++ {
			if i > 6 {
				t.Fatalf("no panel's teaching line names the model's rule:\n%s", tm.capture())
			}
			tm.send("Tab")
			time.Sleep(100 * time.Millisecond)
		}
		tm.waitFor("the model's reason", 10*time.Second, has("model:", "12000 cents requested"))
		tm.send("q")
		tm.waitFor("the quit question", 10*time.Second, has("Quit?"))
		tm.send("y")
		tm.waitExit(10 * time.Second)
	})
}
