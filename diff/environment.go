package diff

import (
	"strings"

	"github.com/flamediff/flamediff/fold"
)

// Environment is how much of a profile the kernel spends on moving threads
// rather than on the database's own work: switching threads off and on the
// CPU, waking other threads, and taking the interrupts that carry wake-ups
// between CPUs. On a VM where server and client sit on different CPUs,
// these paths can hold a large part of the server's CPU per query; a
// version difference read from such a profile is mostly a difference of
// the environment. Shares are of the profile's total, 0 to 1.
type Environment struct {
	// Kernel is false when the profile has no kernel frame at all (it was
	// recorded without them): the shares below are then unknown, not 0.
	Kernel bool
	// InKernel is the share of samples with at least one kernel frame.
	InKernel float64
	// Scheduling: the scheduler's switch path (schedule, __schedule,
	// finish_task_switch, where per-thread cpu-clock samples gather at
	// switch-in), sched_yield.
	Scheduling float64
	// WakeUp: waking another thread (try_to_wake_up, wake_up_q, futex_wake,
	// the wake-up queue's ttwu functions).
	WakeUp float64
	// Interrupts: the interrupts and IPIs that deliver a wake-up to another
	// CPU or bring it out of idle (call-function and reschedule IPIs,
	// the idle loop).
	Interrupts float64
}

// Total is the share of the three paths together.
func (e Environment) Total() float64 { return e.Scheduling + e.WakeUp + e.Interrupts }

// environmentPath is one of Environment's paths: the kernel functions that
// put a sample in it, by exact name or by prefix (a trailing '*').
type environmentPath struct {
	share *float64
	names []string
}

// EnvironmentOf measures p's environment paths. Each sample goes to at
// most one path: the one of its kernel frame nearest the leaf that belongs
// to any (a wake-up done from inside the scheduler is a wake-up; a switch
// entered from a futex wait is scheduling).
func EnvironmentOf(p *fold.Profile) Environment {
	var e Environment
	paths := []environmentPath{
		{&e.Scheduling, []string{"schedule", "__schedule", "schedule_timeout*", "schedule_hrtimeout*", "schedule_preempt_disabled", "preempt_schedule*", "finish_task_switch*", "pick_next_task*", "__switch_to*", "context_switch", "do_sched_yield", "__x64_sys_sched_yield"}},
		{&e.WakeUp, []string{"try_to_wake_up", "wake_up_q", "wake_up_process", "wake_up_state", "__wake_up*", "ttwu_*", "sched_ttwu_pending", "futex_wake*", "select_task_rq*", "__smp_call_single_queue", "send_call_function_single_ipi", "native_send_call_func_single_ipi"}},
		{&e.Interrupts, []string{"sysvec_call_function_single", "__sysvec_call_function_single", "sysvec_reschedule_ipi", "__sysvec_reschedule_ipi", "flush_smp_call_function_queue", "__flush_smp_call_function_queue", "generic_smp_call_function_single_interrupt", "do_idle", "cpuidle_*", "default_idle*", "cpu_startup_entry", "arch_cpu_idle*"}},
	}
	total := p.Total()
	if total == 0 {
		return e
	}
	vals := make([]int64, len(paths))
	var inKernel int64
	for _, s := range p.Stacks {
		kernel := false
	frames:
		for i := len(s.Frames) - 1; i >= 1; i-- {
			name, ok := strings.CutSuffix(s.Frames[i], fold.KernelSuffix)
			if !ok {
				continue
			}
			kernel = true
			for j, path := range paths {
				if matchesAny(name, path.names) {
					vals[j] += s.Value
					break frames
				}
			}
		}
		if kernel {
			inKernel += s.Value
		}
	}
	e.Kernel = inKernel > 0
	e.InKernel = float64(inKernel) / float64(total)
	for j, path := range paths {
		*path.share = float64(vals[j]) / float64(total)
	}
	return e
}

// matchesAny reports whether name is one of names, where a name ending in
// '*' matches every name with that prefix. A compiler suffix such as
// ".isra.0" or ".constprop.0" is ignored.
func matchesAny(name string, names []string) bool {
	if i := strings.IndexByte(name, '.'); i > 0 {
		name = name[:i]
	}
	for _, n := range names {
		if prefix, ok := strings.CutSuffix(n, "*"); ok {
			if strings.HasPrefix(name, prefix) {
				return true
			}
		} else if name == n {
			return true
		}
	}
	return false
}
