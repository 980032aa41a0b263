package symbolmap

import "strings"

// normalizeOpts are the build-noise switches; all default to on.
type normalizeOpts struct {
	SymbolVersions bool // "memcpy@GLIBC_2.14" -> "memcpy"
	CloneSuffixes  bool // "foo.isra.0", "foo.constprop.0.isra.0", "foo.cold" -> "foo"
	GlibcAliases   bool // "__GI_memcpy" -> "memcpy"
	// GlibcCancel drops glibc's cancellation frames under a syscall
	// wrapper ("__send;__syscall_cancel;...;__syscall_cancel_arch" ->
	// "__send"). Unlike the others it works on whole stacks: see
	// cancelDrops.
	GlibcCancel bool
}

func defaultNormalize() normalizeOpts {
	return normalizeOpts{SymbolVersions: true, CloneSuffixes: true, GlibcAliases: true, GlibcCancel: true}
}

// cloneSuffixes are the suffixes GCC and Clang append to the clones they
// make of a function: those taking a number (".isra.0") and not (".cold").
var (
	cloneNumbered = map[string]bool{"isra": true, "constprop": true, "part": true, "cold": true,
		"lto_priv": true, "clone": true, "llvm": true, "specialized": true}
	cloneBare = map[string]bool{"cold": true, "localalias": true, "isra": true, "part": true}
)

// NormalizeName applies the default build-noise normalisation to one
// symbol: see the normalize section of the map format. It never returns "".
// The stack-level glibc_cancel switch does not apply to a lone name.
func NormalizeName(name string) string {
	return defaultNormalize().apply(name)
}

// Normalize applies the map's build-noise normalisation (its normalize
// section, or the defaults) to one symbol, as Apply does to every frame
// but the thread name. It never returns "" for a non-empty name. The
// stack-level glibc_cancel switch does not apply to a lone name: Apply
// and Resolver.Dropped apply it to stacks.
func (m *Map) Normalize(name string) string {
	return m.normalize.apply(name)
}

func (o normalizeOpts) apply(name string) string {
	if name == "" || name[0] == '[' {
		return name // "[unknown]", "[mariadbd]": a DSO, not a symbol
	}
	// Keep stackcollapse-perf.pl's annotations: "_[k]" (kernel), "_[j]" (JIT),
	// "_[i]" (inlined), "_[w]" (waker).
	annot := ""
	if n := len(name); n > 4 && name[n-4] == '_' && name[n-3] == '[' && name[n-1] == ']' {
		annot, name = name[n-4:], name[:n-4]
	}
	if o.SymbolVersions {
		if i := strings.IndexByte(name, '@'); i > 0 {
			name = name[:i]
		}
	}
	if o.CloneSuffixes {
		name = stripClones(name)
	}
	if o.GlibcAliases {
		if rest, ok := strings.CutPrefix(name, "__GI_"); ok && rest != "" {
			name = rest
		}
		if public, ok := glibcPublicNames[name]; ok {
			name = public
		}
	}
	return name + annot
}

// glibcPublicNames are glibc functions whose symbol differs between
// glibc versions for the same code: the thread entry is "clone3" in 2.36's
// debug symbols and "__GI___clone3" (__clone3) in 2.41's, so without this
// a diff of the two shows every thread's root as gone and new.
var glibcPublicNames = map[string]string{
	"__clone3": "clone3",
	"__clone":  "clone",
}

// stripClones removes compiler clone suffixes, repeatedly: ".isra.0",
// ".constprop.0.isra.0", ".part.0", ".cold", ".cold.1", ".lto_priv.0",
// ".llvm.123456" and the demangler's " [clone .isra.0]" forms.
func stripClones(name string) string {
	for {
		if i := strings.LastIndex(name, " [clone ."); i > 0 && strings.HasSuffix(name, "]") {
			name = name[:i]
			continue
		}
		i := strings.LastIndexByte(name, '.')
		if i <= 0 {
			return name
		}
		last := name[i+1:]
		if cloneBare[last] {
			name = name[:i]
			continue
		}
		if !isDigits(last) {
			return name
		}
		j := strings.LastIndexByte(name[:i], '.')
		if j <= 0 || !cloneNumbered[name[j+1:i]] {
			return name
		}
		name = name[:j]
	}
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// GlibcCancelFrames are the frames of glibc's cancellable-syscall path
// (glibc 2.41 and later) that the glibc_cancel normalisation drops once a
// syscall wrapper calls them, listed from the outermost: wrapper ->
// __syscall_cancel -> __internal_syscall_cancel -> __syscall_cancel_arch.
// The _start and _end labels mark the first instruction of
// __syscall_cancel_arch and the one after its syscall; a symboliser that
// names by labels prints them instead of __syscall_cancel_arch.
var GlibcCancelFrames = []string{
	"__syscall_cancel", "__internal_syscall_cancel",
	"__syscall_cancel_arch", "__syscall_cancel_arch_start", "__syscall_cancel_arch_end",
}

// cancelRank is a frame's place in glibc's cancellation chain (its depth
// below the wrapper, from 0), or -1 for any other name. Wrappers call
// __syscall_cancel (send, pwrite, fdatasync, ...) or, for futex waits and
// clock_nanosleep, __internal_syscall_cancel directly; only
// __internal_syscall_cancel calls __syscall_cancel_arch.
func cancelRank(name string) int8 {
	switch name {
	case "__syscall_cancel":
		return 0
	case "__internal_syscall_cancel":
		return 1
	case "__syscall_cancel_arch", "__syscall_cancel_arch_start", "__syscall_cancel_arch_end":
		return 2
	}
	return -1
}

// internalCancelCallers are the (normalised) names of the functions that
// call __internal_syscall_cancel directly, besides __syscall_cancel: the
// call sites in glibc 2.41 and 2.43 (objdump -d of libc.so.6, each call
// site named by the FUNC symbols of libc6-dbg at the start of its
// function, every alias, normalised).
var internalCancelCallers = map[string]bool{
	"__futex_abstimed_wait_common": true,
	"__clock_nanosleep":            true, "__clock_nanosleep_2": true, "clock_nanosleep": true,
}

// syscallCancelCallers are the (normalised) names of the functions that
// call __syscall_cancel, found as internalCancelCallers are: the
// cancellable syscall wrappers of glibc 2.41 and 2.43 (2.43 adds openat2)
// under every alias a symboliser may print.
var syscallCancelCallers = map[string]bool{
	"___mq_timedreceive_time64": true, "___mq_timedsend_time64": true, "__close": true,
	"__connect": true, "__creat": true, "__creat64": true, "__fcntl": true, "__fcntl64": true,
	"__libc_accept": true, "__libc_close": true, "__libc_connect": true, "__libc_fcntl": true,
	"__libc_fcntl64": true, "__libc_msgrcv": true, "__libc_msgsnd": true, "__libc_open": true,
	"__libc_open64": true, "__libc_openat64": true, "__libc_pause": true, "__libc_poll": true,
	"__libc_pread": true, "__libc_pread64": true, "__libc_pwrite": true, "__libc_pwrite64": true,
	"__libc_read": true, "__libc_recv": true, "__libc_recvfrom": true, "__libc_recvmsg": true,
	"__libc_select": true, "__libc_send": true, "__libc_sendmsg": true, "__libc_sendto": true,
	"__libc_sigsuspend": true, "__libc_tcdrain": true, "__libc_waitid": true,
	"__libc_write": true, "__mq_timedreceive": true, "__mq_timedsend": true, "__open": true,
	"__open64": true, "__openat": true, "__openat2": true, "__openat64": true, "__poll": true,
	"__pread": true, "__pread64": true, "__pselect": true, "__pwrite": true, "__pwrite64": true,
	"__read": true, "__readv": true, "__recv": true, "__recvfrom": true, "__recvmmsg": true,
	"__recvmsg": true, "__select": true, "__send": true, "__sendmmsg": true, "__sendmsg": true,
	"__sendto": true, "__sigsuspend": true, "__sigtimedwait": true, "__wait4": true,
	"__waitid": true, "__write": true, "__writev": true, "accept": true, "accept4": true,
	"close": true, "connect": true, "copy_file_range": true, "creat": true, "creat64": true,
	"epoll_pwait": true, "epoll_pwait2": true, "epoll_wait": true, "fallocate": true,
	"fallocate64": true, "fcntl": true, "fcntl64": true, "fdatasync": true, "fsync": true,
	"getrandom_vdso": true, "mq_timedreceive": true, "mq_timedsend": true, "msgrcv": true,
	"msgsnd": true, "msync": true, "open": true, "open64": true, "open_by_handle_at": true,
	"openat": true, "openat2": true, "openat64": true, "pause": true, "poll": true, "ppoll": true,
	"pread": true, "pread64": true, "preadv": true, "preadv2": true, "preadv64": true,
	"preadv64v2": true, "pselect": true, "pwrite": true, "pwrite64": true, "pwritev": true,
	"pwritev2": true, "pwritev64": true, "pwritev64v2": true, "read": true, "readv": true,
	"recv": true, "recvfrom": true, "recvmmsg": true, "recvmsg": true, "select": true,
	"send": true, "sendmmsg": true, "sendmsg": true, "sendto": true, "sigsuspend": true,
	"sigtimedwait": true, "splice": true, "sync_file_range": true, "tcdrain": true, "tee": true,
	"vmsplice": true, "wait4": true, "waitid": true, "write": true, "writev": true,
}

// Where a (normalised) frame may stand above a cancellation chain.
const (
	wrapNone     int8 = iota // unresolved ("[unknown]", "[libc.so.6]"), kernel ("_[k]") or a chain frame
	wrapNamed                // a named function
	wrapSyscall              // one of syscallCancelCallers
	wrapInternal             // one of internalCancelCallers
)

// wrapKind says where a (normalised) frame may stand above a
// cancellation chain.
func wrapKind(name string) int8 {
	switch {
	case name == "" || name[0] == '[' || cancelRank(name) >= 0 || strings.HasSuffix(name, "_[k]"):
		return wrapNone
	case syscallCancelCallers[name]:
		return wrapSyscall
	case internalCancelCallers[name]:
		return wrapInternal
	}
	return wrapNamed
}

// cancelDrops marks in drop (as long as vs) the frames of one resolved
// stack (vs[0] the thread name, leaf last) that the glibc_cancel
// normalisation removes. It looks at the normalised names (their rank and
// wrap kind). A chain is a run of consecutive frames whose ranks increase
// leafwards (the sample may stop in any of them). It is dropped when the
// frame above it is a named function, not the thread name, and either
//
//   - the chain has two frames or more and starts at __syscall_cancel or
//     __internal_syscall_cancel: two adjacent frames of the chain come
//     only from an unwinder that follows the real calls (CFI, perf
//     --call-graph dwarf), so the frame above is the one that called the
//     chain, the wrapper;
//   - or the chain is one frame, the sample in it, under a function known
//     to call it: __syscall_cancel under a wrapper of
//     syscallCancelCallers, __internal_syscall_cancel under one of
//     internalCancelCallers (futex waits, clock_nanosleep).
//
// Otherwise it is kept whole, for the wrapper is not known and its name
// is never guessed: under "[unknown]", the thread name or a kernel frame,
// and when the chain is a lone frame under any other function. A lone
// frame is what a frame-pointer walk gives: none of glibc's syscall
// frames keeps a frame pointer, so the walk goes from the leaf straight
// to the last caller that does ("net_real_write;__syscall_cancel_arch" or
// "net_real_write;__internal_syscall_cancel" in glibc 2.41, vio_write and
// __send skipped), and dropping the leaf would charge the syscall to
// net_real_write. It reports whether it marked any frame; the caller
// clears drop.
func cancelDrops(vs []resolved, drop []bool) bool {
	found := false
	for i := 1; i < len(vs); {
		if vs[i].rank < 0 {
			i++
			continue
		}
		j := i + 1
		for j < len(vs) && vs[j].rank > vs[j-1].rank {
			j++
		}
		above := wrapNone
		if i >= 2 {
			above = vs[i-1].wrap
		}
		chained := j-i >= 2 && vs[i].rank <= 1 && above != wrapNone
		direct := j-i == 1 && (vs[i].rank == 0 && above == wrapSyscall || vs[i].rank == 1 && above == wrapInternal)
		if chained || direct {
			for k := i; k < j; k++ {
				drop[k] = true
			}
			found = true
		}
		i = j
	}
	return found
}
