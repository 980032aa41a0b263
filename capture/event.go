//go:build linux

package capture

import (
	"context"
	"os/exec"
	"strings"
	"time"
)

// DefaultEvent is the software event every Linux machine has.
const DefaultEvent = "cpu-clock"

// DetectEvent returns "cycles" when this machine has a hardware cycle
// counter that perf can use, else "cpu-clock" (virtual machines often have
// none), and says why.
func DetectEvent(ctx context.Context) (event, why string) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "perf", "stat", "-e", "cycles", "-x", ",", "true").CombinedOutput()
	return chooseEvent(string(out), err)
}

// chooseEvent decides from `perf stat -e cycles -x, true`'s output.
func chooseEvent(out string, err error) (event, why string) {
	if err != nil {
		return DefaultEvent, "perf stat -e cycles failed: " + strings.TrimSpace(tail(out, 1))
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, ",")
		if len(f) < 3 || f[2] != "cycles" {
			continue
		}
		if strings.HasPrefix(f[0], "<") { // <not supported>, <not counted>
			return DefaultEvent, "no hardware cycle counter (" + f[0] + ")"
		}
		return "cycles", "hardware cycle counter available"
	}
	return DefaultEvent, "perf stat did not report cycles"
}
