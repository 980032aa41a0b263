package diff

import (
	"math"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/fold"
)

func TestEnvironmentOf(t *testing.T) {
	const folded = `` +
		// user only: no path
		"one_connection;do_command;mysqld_stmt_execute 40\n" +
		// switch-in skid after a futex wait: scheduling
		"one_connection;do_command;__futex_abstimed_wait_common;entry_SYSCALL_64_[k];futex_wait_[k];schedule_[k];__schedule_[k];finish_task_switch.isra.0_[k] 20\n" +
		// a wake-up, sampled in the spinlock release inside it: wake-up
		"one_connection;trans_commit_stmt;pthread_cond_signal;futex_wake_[k];wake_up_q_[k];try_to_wake_up_[k];_raw_spin_unlock_irqrestore_[k] 15\n" +
		// a wake-up done from inside the scheduler counts as a wake-up (nearest the leaf)
		"one_connection;do_command;poll;schedule_[k];__schedule_[k];sched_ttwu_pending_[k];ttwu_do_activate.constprop.0_[k] 5\n" +
		// an IPI taken in user code
		"one_connection;do_command;my_hash_search;asm_sysvec_call_function_single_[k];sysvec_call_function_single_[k];__flush_smp_call_function_queue_[k] 10\n" +
		// kernel work of its own (writing the log): in the kernel, no path
		"log_writer;fdatasync;ext4_sync_file_[k];iowrite16_[k] 10\n"
	p, err := fold.ParseFolded(strings.NewReader(folded), true)
	if err != nil {
		t.Fatal(err)
	}
	e := EnvironmentOf(p)
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"scheduling", e.Scheduling, 0.20},
		{"wake-up", e.WakeUp, 0.20},
		{"interrupts", e.Interrupts, 0.10},
		{"in kernel", e.InKernel, 0.60},
		{"total", e.Total(), 0.50},
	} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s: %.4f, want %.4f", c.name, c.got, c.want)
		}
	}
	if !e.Kernel {
		t.Error("Kernel false for a profile with kernel frames")
	}
}

func TestEnvironmentOfNoKernelFrames(t *testing.T) {
	p, err := fold.ParseFolded(strings.NewReader("t;a;schedule 3\nt;b 1\n"), true)
	if err != nil {
		t.Fatal(err)
	}
	// "schedule" without _[k] is a user function of that name.
	if e := EnvironmentOf(p); e.Kernel || e.Total() != 0 || e.InKernel != 0 {
		t.Errorf("%+v, want no kernel and no shares", e)
	}
	if e := EnvironmentOf(&fold.Profile{}); e.Kernel || e.Total() != 0 {
		t.Errorf("empty profile: %+v", e)
	}
}

func TestMatchesAny(t *testing.T) {
	for _, c := range []struct {
		name string
		want bool
	}{
		{"finish_task_switch.isra.0", true},
		{"schedule_timeout", true},
		{"schedule_work", false},
		{"try_to_wake_up", true},
		{"try_to_wake", false},
		{"ttwu_queue_wakelist", true},
	} {
		names := []string{"finish_task_switch*", "schedule_timeout*", "try_to_wake_up", "ttwu_*"}
		if got := matchesAny(c.name, names); got != c.want {
			t.Errorf("matchesAny(%q) = %v, want %v", c.name, got, c.want)
		}
	}
}
