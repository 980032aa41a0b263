package lab

import (
	"fmt"
	"strings"

	"github.com/flamediff/flamediff/internal/names"
)

// FailedError is the error a bench ends with when servers failed (failed,
// of the config's servers): how many, and each server with the first line
// of its reason. It is nil when failed is empty.
func FailedError(failed []Failure, servers int) error {
	if len(failed) == 0 {
		return nil
	}
	reasons := make([]string, len(failed))
	for i, f := range failed {
		reason := f.Reason
		if i := strings.IndexByte(reason, '\n'); i >= 0 {
			reason = reason[:i] + " …"
		}
		reasons[i] = f.Server + ": " + reason
	}
	return fmt.Errorf("%d of %s failed (the report shows their cells as missing): %s",
		len(failed), names.Plural(servers, "server"), strings.Join(reasons, "; "))
}
