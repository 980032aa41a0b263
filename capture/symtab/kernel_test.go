package symtab

import (
	"errors"
	"os"
	"strings"
	"testing"
)

const kallsymsText = `0000000000000000 A fixed_percpu_data
ffffffff81000000 T _stext
ffffffff81000000 T startup_64
ffffffff81000130 T entry_SYSCALL_64_after_hwframe
ffffffff81000200 t local_text
ffffffff81382870 T __ia32_sys_getpid
ffffffff81382870 T __x64_sys_getpid
ffffffff813828a0 t __pfx___do_sys_gettid
ffffffff822612c0 T __memset
ffffffff822612c0 T __pi_memset
ffffffff822612e0 W weak_fn
ffffffff82400000 r rodata_thing
ffffffff82600000 D data_thing
ffffffffc0a00000 t ext4_write_inode	[ext4]
ffffffffc0a00100 T ext4_sync_file	[ext4]
ffffffffc0b00000 t nf_hook	[nf_tables]
`

func TestKernelResolve(t *testing.T) {
	k, err := ParseKallsyms(strings.NewReader(kallsymsText))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		addr uint64
		want Frame
	}{
		{"first alias, then the later sized one", 0xffffffff81000010, Frame{Sym: "startup_64", Offset: 0x10, DSO: KernelDSO}},
		{"syscall entry", 0xffffffff810001a6, Frame{Sym: "entry_SYSCALL_64_after_hwframe", Offset: 0x76, DSO: KernelDSO}},
		{"local text", 0xffffffff81000201, Frame{Sym: "local_text", Offset: 1, DSO: KernelDSO}},
		// perf fixes ends before dropping aliases, so all but the last
		// alias in kallsyms order have size 0 and the last one wins
		// (checked against perf script on this kernel).
		{"alias: last wins", 0xffffffff81382889, Frame{Sym: "__x64_sys_getpid", Offset: 0x19, DSO: KernelDSO}},
		{"alias: last wins over fewer underscores", 0xffffffff822612cb, Frame{Sym: "__pi_memset", Offset: 0xb, DSO: KernelDSO}},
		{"weak", 0xffffffff822612e1, Frame{Sym: "weak_fn", Offset: 1, DSO: KernelDSO}},
		{"module", 0xffffffffc0a00010, Frame{Sym: "ext4_write_inode", Offset: 0x10, DSO: "[ext4]"}},
		{"other module", 0xffffffffc0b00004, Frame{Sym: "nf_hook", Offset: 4, DSO: "[nf_tables]"}},
		{"module symbol runs to the next symbol", 0xffffffffc0a02100, Frame{Sym: "ext4_sync_file", Offset: 0x2000, DSO: "[ext4]"}},
		{"last symbol ends at the page after its start", 0xffffffffc0b00fff, Frame{Sym: "nf_hook", Offset: 0xfff, DSO: "[nf_tables]"}},
		{"past the last symbol", 0xffffffffc0b01000, Frame{DSO: KernelDSO}},
		{"kernel's last symbol before modules ends at the next page", 0xffffffff82601001, Frame{DSO: KernelDSO}},
		{"before the kernel", 0x1000, Frame{DSO: KernelDSO}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.PerfAddr = tt.addr
			if got := k.Resolve(tt.addr); got != tt.want {
				t.Errorf("Resolve(%#x) = %+v, want %+v", tt.addr, got, tt.want)
			}
		})
	}
}

func TestParseKallsymsErrors(t *testing.T) {
	zero := "0000000000000000 T _stext\n0000000000000000 t foo\t[ext4]\n"
	_, err := ParseKallsyms(strings.NewReader(zero))
	if !errors.Is(err, ErrNoKernelSymbols) {
		t.Errorf("ParseKallsyms(zeroed) error = %v, want ErrNoKernelSymbols", err)
	}
	if err != nil && !strings.Contains(err.Error(), "kptr_restrict") {
		t.Errorf("ParseKallsyms(zeroed) error %q does not say how to fix it", err)
	}
	for _, in := range []string{"", "ffffffff81000000\n", "xyz T foo\n", "ffffffff81000000 T \n", "ffffffff81000000 TT foo\n"} {
		if k, err := ParseKallsyms(strings.NewReader(in)); !errors.Is(err, ErrMalformed) || k != nil {
			t.Errorf("ParseKallsyms(%q) = %v, %v, want an error wrapping ErrMalformed", in, k, err)
		}
	}
}

func TestLoadKernel(t *testing.T) {
	if _, err := os.Stat("/proc/kallsyms"); err != nil {
		t.Skipf("no /proc/kallsyms: %v", err)
	}
	k, err := LoadKernel()
	if errors.Is(err, ErrNoKernelSymbols) {
		t.Skipf("kernel addresses hidden: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if k.Len() < 1000 {
		t.Errorf("LoadKernel kept %d symbols, want thousands", k.Len())
	}
}
