package report

import (
	"testing"

	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/fold"
)

// A profile recorded with kernel frames gets "sched+wake %" in its Run
// table and "environment" in its JSON; one without kernel frames gets
// neither, and in a diff of the two the column shows "-" for it.
func TestEnvironmentColumn(t *testing.T) {
	kernel := &fold.Profile{Stacks: []fold.Stack{
		{Frames: []string{"t", "start_thread", "mysqld_stmt_execute"}, Value: 6},
		{Frames: []string{"t", "start_thread", "futex_wait_[k]", "__schedule_[k]", "finish_task_switch.isra.0_[k]"}, Value: 3},
		{Frames: []string{"t", "start_thread", "futex_wake_[k]", "try_to_wake_up_[k]"}, Value: 1},
	}}
	opts := diff.Options{IsThreadRoot: isRoot, Labels: []string{"k"}}
	sum := diff.Summarize(kernel, opts)
	s := runSection([]*diff.Summary{sum}, FormatTable)
	col := -1
	for i, c := range s.Columns {
		if c.Head == "sched+wake %" {
			col = i
		}
	}
	if col < 0 {
		t.Fatalf("columns %v: want sched+wake %%", s.Columns)
	}
	if got := s.Rows[0][col].Text; got != "40.00" {
		t.Errorf("sched+wake %% = %q, want 40.00 (4 of 10 samples)", got)
	}
	env, ok := decode(t, ProfileJSON(sum, nil, Options{}))["profile"].(map[string]any)["environment"].(map[string]any)
	if !ok || env["scheduling_pct"].(float64) != 30 || env["wake_up_pct"].(float64) != 10 || env["kernel_pct"].(float64) != 40 {
		t.Errorf("environment = %v, want scheduling 30, wake-up 10, kernel 40", env)
	}

	plain := diff.Summarize(handProfile(nil), diff.Options{IsThreadRoot: isRoot, Labels: []string{"u"}})
	if _, ok := decode(t, ProfileJSON(plain, nil, Options{}))["profile"].(map[string]any)["environment"]; ok {
		t.Error("environment present for a profile without kernel frames")
	}
	for _, c := range runSection([]*diff.Summary{plain}, FormatTable).Columns {
		if c.Head == "sched+wake %" {
			t.Error("sched+wake % column for a profile without kernel frames")
		}
	}
	both := runSection([]*diff.Summary{sum, plain}, FormatTable)
	if got := both.Rows[1][col].Text; got != "-" {
		t.Errorf("profile without kernel frames beside one with: %q, want -", got)
	}
}
