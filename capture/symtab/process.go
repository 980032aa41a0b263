package symtab

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
)

// DefaultDebugRoot is where separate debug files are looked up by build
// id (<root>/.build-id/xx/yyyy.debug), as perf and gdb do.
const DefaultDebugRoot = "/usr/lib/debug"

// maxRetired bounds the mappings kept from before a Refresh.
const maxRetired = 4096

// Process resolves user addresses of one process. It is safe for
// concurrent use.
type Process struct {
	mu         sync.Mutex
	procRoot   string
	pid        int
	open       func(m Mapping) (io.ReaderAt, error)
	debugRoots []string
	cur        []Mapping // sorted by Start
	retired    []Mapping // newest first: mappings gone at a Refresh
	objs       map[objKey]*objEntry
	byBuildID  map[string]*Object
	// pin: Refresh opens the file of every new executable mapping at once
	// (live processes only), so that it still resolves after the process
	// exits or execs, or the file is deleted or replaced.
	pin     bool
	exe     fileKey  // identity of procRoot/PID/exe at the first Refresh
	exePath string   // its target then
	notes   []string // what happened to the process's files, in order
	noted   map[string]bool
}

// fileKey identifies a file by device and inode.
type fileKey struct {
	dev string
	ino uint64
}

type objKey struct {
	dev   string
	inode uint64
	path  string // anonymous pseudo files ([vdso]) share inode 0
}

type objEntry struct {
	obj    *Object // nil when the file could not be read
	err    error
	parsed bool
	// pinned is the file opened by Refresh, read at the first Resolve.
	pinned io.ReaderAt
	dso    string
	key    string // Mapped.Key, made on first use
}

// NewProcess reads procRoot/PID/maps ("/proc" on a live system). ELF files
// are opened through procRoot/PID/map_files/<start>-<end> (the exact file
// mapped, even when deleted or replaced) and, failing that, through
// procRoot/PID/root/<path>, so a server in a chroot or container resolves
// against its own files; a replaced file (another inode) or a deleted one
// not reachable through map_files resolves to unknown symbols. [vdso] is
// read from procRoot/PID/mem. Objects are cached per (dev, inode) and
// their symbols shared per build id.
//
// The files of executable mappings are opened (not yet read) when they
// are first seen, so that addresses still resolve after the process exits
// or execs, or its files are deleted or replaced: Close releases them.
// Notes says what happened to the process's files meanwhile.
func NewProcess(procRoot string, pid int) (*Process, error) {
	p := &Process{procRoot: procRoot, pid: pid, pin: true}
	p.open = p.openProc
	p.init()
	if err := p.Refresh(); err != nil {
		return nil, err
	}
	return p, nil
}

// NewProcessFromMaps builds a Process without /proc: open is called with
// a mapping's Path ("[vdso]" included) to read its ELF file. Refresh is a
// no-op on it.
func NewProcessFromMaps(maps []Mapping, open func(path string) (io.ReaderAt, error)) *Process {
	p := &Process{pid: -1}
	p.open = func(m Mapping) (io.ReaderAt, error) { return open(m.Path) }
	p.init()
	p.cur = sortedMaps(maps)
	return p
}

func (p *Process) init() {
	p.debugRoots = []string{DefaultDebugRoot}
	p.objs = make(map[objKey]*objEntry)
	p.byBuildID = make(map[string]*Object)
	p.noted = make(map[string]bool)
}

// Close releases the files opened for mappings not yet read. The Process
// still resolves addresses in objects already read.
func (p *Process) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pin = false // a Refresh after Close opens nothing
	var errs []error
	for _, e := range p.objs {
		if c, ok := e.pinned.(io.Closer); ok {
			errs = append(errs, c.Close())
		}
		e.pinned = nil
	}
	return errors.Join(errs...)
}

// Notes returns what Refresh and Resolve noticed about the process's
// files, for a person: an exec, executable files deleted or replaced while
// mapped, objects whose symbols could not be read. Each is said once.
func (p *Process) Notes() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.notes...)
}

// note records msg once. p.mu is held.
func (p *Process) note(msg string) {
	if !p.noted[msg] {
		p.noted[msg] = true
		p.notes = append(p.notes, msg)
	}
}

// SetDebugRoot sets where separate debug files are looked up by build id
// ("" turns the lookup off). Objects already read keep their symbols.
func (p *Process) SetDebugRoot(dir string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.debugRoots = nil
	if dir != "" {
		p.debugRoots = []string{dir}
	}
}

// AddDebugRoot adds a directory to look up separate debug files in
// (<dir>/.build-id/xx/yyyy.debug, the layout of Debian's -dbg packages),
// before the ones already set: a server run from a private tree finds the
// debug files of its own libc there.
func (p *Process) AddDebugRoot(dir string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.debugRoots = append([]string{dir}, p.debugRoots...)
}

func sortedMaps(maps []Mapping) []Mapping {
	out := make([]Mapping, len(maps))
	copy(out, maps)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

// Refresh re-reads procRoot/PID/maps. Mappings that disappeared (after a
// dlclose, munmap or exec) are kept, newest first, and still resolve
// addresses no current mapping covers. Call it at the start and the end
// of a sampling window. An error leaves the mappings unchanged.
func (p *Process) Refresh() error {
	if p.pid < 0 {
		return nil
	}
	path := filepath.Join(p.procRoot, strconv.Itoa(p.pid), "maps")
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("refresh maps of pid %d: %w", p.pid, err)
	}
	maps, err := ParseMaps(data)
	if err != nil {
		return fmt.Errorf("refresh maps of pid %d: %w", p.pid, err)
	}
	exe, exePath, exeOK := p.readExe()
	p.mu.Lock()
	defer p.mu.Unlock()
	if exeOK {
		switch {
		case p.exe == (fileKey{}):
			p.exe, p.exePath = exe, exePath
		case exe != p.exe:
			p.note(fmt.Sprintf("process %d exec'd %s (it ran %s before): samples taken before the exec resolve against the old program's mappings only where the new one maps nothing", p.pid, exePath, p.exePath))
			p.exe, p.exePath = exe, exePath
		}
	}
	next := sortedMaps(maps)
	still := make(map[Mapping]bool, len(next))
	for _, m := range next {
		still[m] = true
	}
	var gone []Mapping
	for _, m := range p.cur {
		if !still[m] {
			gone = append(gone, m)
		}
	}
	p.retired = append(gone, p.retired...)
	if len(p.retired) > maxRetired {
		p.retired = p.retired[:maxRetired]
	}
	p.cur = next
	for _, m := range next {
		if p.pin && m.Exec() && m.Path != "" && (m.Inode != 0 || m.Path == "[vdso]") {
			p.pinFile(m)
		}
		if m.Deleted && m.Exec() {
			if e := p.objs[keyOf(m)]; e != nil && e.err != nil {
				p.note(fmt.Sprintf("%s was deleted or replaced on disk while process %d ran it, and the mapped file cannot be read: its frames stay unresolved (%v)", m.Path, p.pid, e.err))
			} else {
				p.note(fmt.Sprintf("%s was deleted or replaced on disk while process %d ran it: its symbols are read from the mapped file itself (%s/%d/map_files)", m.Path, p.pid, p.procRoot, p.pid))
			}
		}
	}
	return nil
}

// pinFile opens m's file now, to be read when an address in it is first
// resolved. p.mu is held.
func (p *Process) pinFile(m Mapping) {
	k := keyOf(m)
	if _, ok := p.objs[k]; ok {
		return
	}
	e := &objEntry{dso: m.DSO()}
	if r, err := p.open(m); err != nil {
		e.parsed, e.err = true, err
	} else {
		e.pinned = r
	}
	p.objs[k] = e
}

// readExe returns the identity and path of the process's executable.
func (p *Process) readExe() (fileKey, string, bool) {
	link := filepath.Join(p.procRoot, strconv.Itoa(p.pid), "exe")
	f, err := os.Open(link)
	if err != nil {
		return fileKey{}, "", false
	}
	defer f.Close()
	dev, ino, ok := fileID(f)
	if !ok {
		return fileKey{}, "", false
	}
	path, _ := os.Readlink(link)
	return fileKey{dev, ino}, path, true
}

// Mappings returns a copy of the current mappings.
func (p *Process) Mappings() []Mapping {
	p.mu.Lock()
	defer p.mu.Unlock()
	return sortedMaps(p.cur)
}

// findMapping returns the current mapping containing addr, else the
// newest retired one.
func (p *Process) findMapping(addr uint64) (Mapping, bool) {
	i := sort.Search(len(p.cur), func(i int) bool { return p.cur[i].Start > addr }) - 1
	if i >= 0 && p.cur[i].Contains(addr) {
		return p.cur[i], true
	}
	for _, m := range p.retired {
		if m.Contains(addr) {
			return m, true
		}
	}
	return Mapping{}, false
}

// Resolve returns the frame perf script would print for the user address
// addr: Frame{DSO: "[unknown]"} outside every mapping, Sym "" when the
// mapping's object has no symbol there (or cannot be read).
func (p *Process) Resolve(addr uint64) Frame {
	p.mu.Lock()
	defer p.mu.Unlock()
	m, ok := p.findMapping(addr)
	if !ok {
		return Frame{DSO: "[unknown]", PerfAddr: addr}
	}
	off := addr - m.Start + m.Offset
	fr := Frame{DSO: m.DSO(), PerfAddr: off}
	obj := p.object(m)
	if obj == nil {
		return fr
	}
	if name, symOff, ok := obj.Lookup(off); ok {
		fr.Sym, fr.Offset = name, symOff
	}
	return fr
}

// Object returns the symbols of the object mapped at addr, or an error
// saying why there are none.
func (p *Process) Object(addr uint64) (*Object, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	m, ok := p.findMapping(addr)
	if !ok {
		return nil, fmt.Errorf("object at %#x: not mapped", addr)
	}
	obj := p.object(m)
	if obj == nil {
		return nil, fmt.Errorf("object at %#x (%s): %w", addr, m.DSO(), p.objs[keyOf(m)].err)
	}
	return obj, nil
}

func keyOf(m Mapping) objKey {
	k := objKey{dev: m.Dev, inode: m.Inode}
	if m.Inode == 0 {
		k.path = m.Path
	}
	return k
}

var errNoFile = errors.New("no file behind the mapping")

// object returns the cached symbols of m's file, reading it on first use.
// p.mu is held.
func (p *Process) object(m Mapping) *Object {
	if m.Path == "" || (m.Inode == 0 && m.Path != "[vdso]") {
		return nil // anonymous memory, [heap], [stack], [vvar], ...
	}
	k := keyOf(m)
	e, ok := p.objs[k]
	if !ok {
		e = &objEntry{dso: m.DSO()}
		p.objs[k] = e
	}
	if !e.parsed {
		e.parsed = true
		r := e.pinned
		e.pinned = nil
		if r == nil {
			var err error
			if r, err = p.open(m); err != nil {
				e.err = err
			}
		}
		if r != nil {
			if c, ok := r.(io.Closer); ok {
				defer func() { _ = c.Close() }()
			}
			if e.obj, e.err = p.parse(r); e.err != nil {
				e.err = fmt.Errorf("%s: %w", m.DSO(), e.err)
			}
		}
	}
	if e.obj == nil && e.err != nil && m.Exec() {
		p.note(fmt.Sprintf("frames in %s stay unresolved: %v", m.DSO(), e.err))
	}
	return e.obj
}

// parse reads r's symbols, reusing those of an object with the same build
// id and looking for a debug file by build id.
func (p *Process) parse(r io.ReaderAt) (*Object, error) {
	obj, err := ParseELF(r, nil)
	if err != nil {
		return nil, err
	}
	if obj.BuildID == "" {
		return obj, nil
	}
	if o, ok := p.byBuildID[obj.BuildID]; ok {
		return o, nil
	}
	if obj.Source != ".symtab" && len(obj.BuildID) > 2 {
		for _, root := range p.debugRoots {
			dbg := filepath.Join(root, ".build-id", obj.BuildID[:2], obj.BuildID[2:]+".debug")
			f, err := os.Open(dbg)
			if err != nil {
				continue
			}
			o, err := ParseELF(r, f)
			f.Close()
			if err == nil {
				obj = o
				break
			}
		}
	}
	p.byBuildID[obj.BuildID] = obj
	return obj, nil
}

// openProc opens m's file for NewProcess.
func (p *Process) openProc(m Mapping) (io.ReaderAt, error) {
	pidDir := filepath.Join(p.procRoot, strconv.Itoa(p.pid))
	if m.Path == "[vdso]" {
		return readMem(filepath.Join(pidDir, "mem"), m)
	}
	mf := filepath.Join(pidDir, "map_files", fmt.Sprintf("%x-%x", m.Start, m.End))
	if f, err := os.Open(mf); err == nil {
		return f, nil
	}
	if m.Deleted {
		return nil, fmt.Errorf("open %s: deleted and %s unreadable: %w", m.Path, mf, errNoFile)
	}
	f, err := os.Open(filepath.Join(pidDir, "root", m.Path))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", m.Path, err)
	}
	if _, ino, ok := fileID(f); ok && ino != m.Inode {
		f.Close()
		return nil, fmt.Errorf("open %s: replaced on disk (inode %d, mapped %d): %w", m.Path, ino, m.Inode, errNoFile)
	}
	return f, nil
}

// readMem copies a mapping's bytes out of /proc/PID/mem.
func readMem(path string, m Mapping) (io.ReaderAt, error) {
	if m.End-m.Start > 1<<20 {
		return nil, fmt.Errorf("read %s: mapping of %d bytes too large", path, m.End-m.Start)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", m.Path, err)
	}
	defer f.Close()
	buf := make([]byte, m.End-m.Start)
	if _, err := f.ReadAt(buf, int64(m.Start)); err != nil {
		return nil, fmt.Errorf("read %s at %#x: %w", m.Path, m.Start, err)
	}
	return bytes.NewReader(buf), nil
}
