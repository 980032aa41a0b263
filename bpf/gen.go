package bpf

// Regenerate profile_bpfel.go and profile_bpfel.o (committed) after editing
// profile.bpf.c: needs clang, llvm and libbpf-dev (see README.md).
//go:generate go tool bpf2go -tags linux -type stack -type count_key -type health_counters -type sample -type ranges -type thread_state -type offcpu_key -type offcpu_value -type offcpu_start -type cfi_rule -cc clang -cflags "-O2 -g -Wall -Werror" -target bpfel profile profile.bpf.c -- -I/usr/include/x86_64-linux-gnu
