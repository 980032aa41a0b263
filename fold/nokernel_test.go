package fold

import "testing"

func TestIsKernelModule(t *testing.T) {
	tests := []struct {
		mod  string
		want bool
	}{
		{"[kernel.kallsyms]", true},
		{"[guest.kernel.kallsyms]", true},
		{"[nf_tables]", true},
		{"/usr/lib/debug/boot/vmlinux", true},
		{"vmlinux", true},
		{"[unknown]", false},
		{"[kernel.unknown]", false},
		{"/usr/lib/debug/boot/vmlinux-6.1.0", false}, // Perl's vmlinux$ does not match either
		{"[vdso]", false},
		{"[vsyscall]", false},
		{"[heap]", false},
		{"[stack]", false},
		{"[anon:jit]", false},
		{"[uprobes]", false},
		{"/usr/sbin/mariadbd", false},
		{"/usr/lib/x86_64-linux-gnu/libc.so.6", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := isKernelModule(tt.mod); got != tt.want {
			t.Errorf("isKernelModule(%q) = %v, want %v", tt.mod, got, tt.want)
		}
	}
}

func TestParsePerfScriptNoKernel(t *testing.T) {
	const in = `mariadbd 100/101 1.000000: cpu-clock: 
	ffffffff8100 native_write_msr+0x4 ([kernel.kallsyms])
	ffffffff8200 do_syscall_64+0x30 ([kernel.kallsyms])
	7f0000000100 __libc_pwrite64+0x10 (/usr/lib/x86_64-linux-gnu/libc.so.6)
	555500000100 os_file_write_func+0x20 (/usr/sbin/mariadbd)
	555500000200 do_command+0x30 (/usr/sbin/mariadbd)

mariadbd 100/101 1.002000: cpu-clock: 
	555500000200 do_command+0x30 (/usr/sbin/mariadbd)

mariadbd 100/102 1.004000: cpu-clock: 
	ffffffff8100 nft_do_chain+0x4 ([nf_tables])
	ffffffff8300 asm_sysvec_apic_timer_interrupt+0x1 (/boot/vmlinux)

mariadbd 100/102 1.006000: cpu-clock: 
	7fff00000100 __vdso_clock_gettime+0x10 ([vdso])
	555500000300 my_hrtime+0x5 (/usr/sbin/mariadbd)
	0 [unknown] ([unknown])

`
	tests := []struct {
		name string
		opts PerfOptions
		want string
	}{
		{"default keeps kernel frames", PerfOptions{},
			"mariadbd;[unknown];my_hrtime;__vdso_clock_gettime 1\n" +
				"mariadbd;asm_sysvec_apic_timer_interrupt;nft_do_chain 1\n" +
				"mariadbd;do_command 1\n" +
				"mariadbd;do_command;os_file_write_func;__libc_pwrite64;do_syscall_64;native_write_msr 1\n"},
		{"NoKernel drops them, samples stay", PerfOptions{NoKernel: true},
			"mariadbd 1\n" +
				"mariadbd;[unknown];my_hrtime;__vdso_clock_gettime 1\n" +
				"mariadbd;do_command 1\n" +
				"mariadbd;do_command;os_file_write_func;__libc_pwrite64 1\n"},
		{"NoKernel wins over Kernel", PerfOptions{NoKernel: true, Kernel: true, TID: true},
			"mariadbd-100/101;do_command 1\n" +
				"mariadbd-100/101;do_command;os_file_write_func;__libc_pwrite64 1\n" +
				"mariadbd-100/102 1\n" +
				"mariadbd-100/102;[unknown];my_hrtime;__vdso_clock_gettime_[k] 1\n"}, // Perl marks [vdso] with _[k]
	}
	for _, tt := range tests {
		for _, workers := range []int{1, 4} {
			p, got := foldPerf(t, in, tt.opts, workers)
			if got != tt.want {
				t.Errorf("%s (workers %d): ParsePerfScript(%+v) =\n%s\nwant\n%s", tt.name, workers, tt.opts, got, tt.want)
			}
			if p.Samples != 4 || p.Unit != UnitSamples {
				t.Errorf("%s: Samples, Unit = %d, %q, want 4, %q", tt.name, p.Samples, p.Unit, UnitSamples)
			}
		}
	}
}
