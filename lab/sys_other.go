//go:build !linux

package lab

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
)

// platform returns an error wrapping errors.ErrUnsupported: the lab runs
// Debian packages and mariadbd, on Linux only.
func platform() error {
	return fmt.Errorf("lab: %w on %s (Linux only)", errors.ErrUnsupported, runtime.GOOS)
}

func ownGroup(*exec.Cmd, bool) {}

func killGroup(int) {}

func terminate(int) {}

func lockFile(context.Context, string) (func(), error) { return nil, platform() }
