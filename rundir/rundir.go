package rundir

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/internal/atomicfile"
	"github.com/flamediff/flamediff/internal/fserr"
)

// The files of a run directory.
const (
	StacksFile  = fold.StacksFile
	MetaFile    = fold.MetaFile
	PprofFile   = "profile.pb.gz"
	WorkloadLog = "workload.log"
	// OffCPUFile and OffCPUSwitchesFile hold the off-CPU profile (record
	// --off-cpu): the stacks at which threads left the CPU, weighted by
	// microseconds off the CPU and by switches, each with a leaf frame
	// [voluntary] or [involuntary].
	OffCPUFile         = fold.OffCPUFile
	OffCPUSwitchesFile = fold.OffCPUSwitchesFile
)

// Create makes dir for a new run: created when absent, accepted when it
// is an empty directory the caller may write; its error names the path
// and the problem (atomicfile.MakeDir).
func Create(dir string) error {
	return atomicfile.MakeDir(dir)
}

// CreateLog creates DIR/workload.log for the workload's output.
func CreateLog(dir string) (*os.File, error) {
	return os.Create(filepath.Join(dir, WorkloadLog))
}

// Write writes the run's stacks.folded, profile.pb.gz and run.json, each
// atomically, run.json last, so that a run directory whose run.json says
// complete has its stacks.
func Write(dir string, p *fold.Profile, m *fold.Meta) error {
	var buf bytes.Buffer
	if err := fold.WriteFolded(&buf, p); err != nil {
		return err
	}
	if err := WriteFile(filepath.Join(dir, StacksFile), buf.Bytes()); err != nil {
		return err
	}
	buf.Reset()
	if err := fold.WritePprof(&buf, p); err != nil {
		return err
	}
	if err := WriteFile(filepath.Join(dir, PprofFile), buf.Bytes()); err != nil {
		return err
	}
	return WriteMeta(dir, m)
}

// WriteOffCPU writes the off-CPU profile's two folded files, each
// atomically: DIR/offcpu.folded (time, in microseconds) and
// DIR/offcpu-switches.folded (switches). Write run.json after it.
func WriteOffCPU(dir string, time, switches *fold.Profile) error {
	for _, f := range []struct {
		name string
		p    *fold.Profile
	}{{OffCPUFile, time}, {OffCPUSwitchesFile, switches}} {
		var buf bytes.Buffer
		if err := fold.WriteFolded(&buf, f.p); err != nil {
			return err
		}
		if err := WriteFile(filepath.Join(dir, f.name), buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// ReadOffCPU reads a run directory's off-CPU profile: the time
// (microseconds, Unit fold.UnitOffCPUMicros) and the switches (Unit
// fold.UnitSwitches), with the run's metadata. A run recorded
// without --off-cpu has neither file: the error then wraps
// fs.ErrNotExist and says so.
func ReadOffCPU(dir string) (time, switches *fold.Profile, err error) {
	out := make([]*fold.Profile, 2)
	for i, name := range []string{OffCPUFile, OffCPUSwitchesFile} {
		path := filepath.Join(dir, name)
		f, err := os.Open(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("run directory %s: no %s in it (record it with --off-cpu): %w", dir, name, err)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("run directory %w", fserr.Describe(path, err, "file"))
		}
		p, err := fold.ParseFolded(f, true)
		_ = f.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		p.Unit = []string{fold.UnitOffCPUMicros, fold.UnitSwitches}[i]
		out[i] = p
	}
	if m, err := ReadMeta(dir); err == nil {
		out[0].Meta, out[1].Meta = m, m
	}
	return out[0], out[1], nil
}

// WriteMeta writes DIR/run.json alone, atomically: what a run that
// sampled nothing leaves.
func WriteMeta(dir string, m *fold.Meta) error {
	var buf bytes.Buffer
	if err := fold.WriteMeta(&buf, m); err != nil {
		return err
	}
	return WriteFile(filepath.Join(dir, MetaFile), buf.Bytes())
}

// WriteFile writes one of the files flamediff makes in its own output
// directories (a run directory, a bench report): atomically, with the mode
// a new file gets under the umask, or the mode of the file it replaces.
func WriteFile(path string, data []byte) error {
	o, err := atomicfile.Check(path)
	if err != nil {
		return fmt.Errorf("output %w", err)
	}
	if err := o.Write(nil, data); err != nil {
		return fmt.Errorf("output %w", err)
	}
	return nil
}

// ReadMeta reads DIR/run.json. Its errors name the file: "run directory
// DIR/run.json: no such file", or "DIR/run.json: line 3, column 7: ...".
func ReadMeta(dir string) (*fold.Meta, error) {
	path := filepath.Join(dir, MetaFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("run directory %w", fserr.Describe(path, err, "file"))
	}
	defer f.Close()
	m, err := fold.ParseMeta(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// Read reads a run directory's stacks.folded and, when present, its
// run.json into one profile: the metadata's unit, event and sample count
// replace what the folded text implies, and the label defaults to the
// directory's name. Without run.json the profile has empty metadata (no
// per-op figures). strict makes a line that cannot be parsed an error; else
// it is counted in Profile.Skipped. A run that holds no samples is an error
// wrapping ErrNoSamples that points at run.json and workload.log.
func Read(dir string, strict bool) (*fold.Profile, error) {
	stacks := filepath.Join(dir, StacksFile)
	p, err := ParseFile(stacks, fold.ParseOptions{Format: fold.FormatFolded, Strict: strict})
	if errors.Is(err, ErrNoSamples) {
		return nil, fmt.Errorf("%w; the run recorded nothing: see %s and the run's %s", err, filepath.Join(dir, MetaFile), WorkloadLog)
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("run directory %s: no %s in it (a run directory holds %s and %s)", dir, StacksFile, StacksFile, MetaFile)
		}
		return nil, err
	}
	m, err := ReadMeta(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		m = &fold.Meta{} // a run directory without run.json: no per-op figures
	case err != nil:
		return nil, err
	default:
		if m.Unit != "" {
			p.Unit = m.Unit
		}
		if m.Event != "" {
			p.Event = m.Event
		}
		if m.Samples > 0 {
			p.Samples = m.Samples
		}
	}
	p.Meta = m
	if m.Label == "" {
		m.Label = filepath.Base(filepath.Clean(dir))
	}
	return p, nil
}

// ErrIncomplete is wrapped by Check for a run whose run.json says
// "complete": false.
var ErrIncomplete = errors.New("incomplete capture (run.json complete: false)")

// ErrNoPerOp is wrapped by Check for a run without the figures that per-op
// tables need: CPU seconds, operations, and a rate.
var ErrNoPerOp = errors.New("no per-op figures")

// Check says whether a run's metadata can stand in a per-op comparison: it
// is complete, and it has CPU seconds, operations and a rate. It returns
// the run's operations per second (run.json's qps, else operations over
// the window).
func Check(m *fold.Meta) (qps float64, err error) {
	if m.Complete != nil && !*m.Complete {
		why := m.Incomplete
		if why == "" {
			why = "no reason given"
		}
		return 0, fmt.Errorf("%w: %s", ErrIncomplete, why)
	}
	if !m.HasPerOp() {
		return 0, fmt.Errorf("%s has no cpu_seconds or no operations: %w", MetaFile, ErrNoPerOp)
	}
	qps = m.QPS
	if qps <= 0 && m.WindowSeconds > 0 {
		qps = float64(m.Operations) / m.WindowSeconds
	}
	if qps <= 0 {
		return 0, fmt.Errorf("%s has no qps (nor window_seconds): %w", MetaFile, ErrNoPerOp)
	}
	return qps, nil
}
