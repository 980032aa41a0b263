package symtab

import (
	"errors"
	"reflect"
	"testing"
)

func TestParseMaps(t *testing.T) {
	tests := []struct {
		name string
		line string
		want Mapping
	}{
		{"file", "55d8561c9000-55d8561cb000 r--p 00000000 fe:00 247026                     /usr/bin/cat",
			Mapping{Start: 0x55d8561c9000, End: 0x55d8561cb000, Perms: "r--p", Dev: "fe:00", Inode: 247026, Path: "/usr/bin/cat"}},
		{"text with offset", "7f3a1c628000-7f3a1c77d000 r-xp 00026000 fe:00 325841                     /usr/lib/x86_64-linux-gnu/libc.so.6",
			Mapping{Start: 0x7f3a1c628000, End: 0x7f3a1c77d000, Offset: 0x26000, Perms: "r-xp", Dev: "fe:00", Inode: 325841, Path: "/usr/lib/x86_64-linux-gnu/libc.so.6"}},
		{"deleted", "5581e2a82000-5581e3408000 r-xp 00682000 08:01 1835121                    /usr/sbin/mariadbd (deleted)",
			Mapping{Start: 0x5581e2a82000, End: 0x5581e3408000, Offset: 0x682000, Perms: "r-xp", Dev: "08:01", Inode: 1835121, Path: "/usr/sbin/mariadbd", Deleted: true}},
		{"vdso", "7ffd3a5f4000-7ffd3a5f6000 r-xp 00000000 00:00 0                          [vdso]",
			Mapping{Start: 0x7ffd3a5f4000, End: 0x7ffd3a5f6000, Perms: "r-xp", Dev: "00:00", Path: "[vdso]"}},
		{"heap", "5581e4a3e000-5581e4d9f000 rw-p 00000000 00:00 0                          [heap]",
			Mapping{Start: 0x5581e4a3e000, End: 0x5581e4d9f000, Perms: "rw-p", Dev: "00:00", Path: "[heap]"}},
		{"anonymous", "7f3a1c400000-7f3a1c421000 rw-p 00000000 00:00 0 ",
			Mapping{Start: 0x7f3a1c400000, End: 0x7f3a1c421000, Perms: "rw-p", Dev: "00:00"}},
		{"anonymous without padding", "7f3a1c400000-7f3a1c421000 ---p 00000000 00:00 0",
			Mapping{Start: 0x7f3a1c400000, End: 0x7f3a1c421000, Perms: "---p", Dev: "00:00"}},
		{"named anonymous", "7f3a1b000000-7f3a1b200000 rw-p 00000000 00:00 0                          [anon:jemalloc]",
			Mapping{Start: 0x7f3a1b000000, End: 0x7f3a1b200000, Perms: "rw-p", Dev: "00:00", Path: "[anon:jemalloc]"}},
		{"spaces in path", "7f3a1d000000-7f3a1d001000 r-xp 00001000 fe:00 42                         /opt/my server/lib my.so",
			Mapping{Start: 0x7f3a1d000000, End: 0x7f3a1d001000, Offset: 0x1000, Perms: "r-xp", Dev: "fe:00", Inode: 42, Path: "/opt/my server/lib my.so"}},
		{"spaces in deleted path", "7f3a1d000000-7f3a1d001000 r-xp 00001000 fe:00 42 /tmp/a b (deleted)",
			Mapping{Start: 0x7f3a1d000000, End: 0x7f3a1d001000, Offset: 0x1000, Perms: "r-xp", Dev: "fe:00", Inode: 42, Path: "/tmp/a b", Deleted: true}},
		{"vsyscall", "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]",
			Mapping{Start: 0xffffffffff600000, End: 0xffffffffff601000, Perms: "--xp", Dev: "00:00", Path: "[vsyscall]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseMaps([]byte(tt.line + "\n"))
			if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], tt.want) {
				t.Fatalf("ParseMaps(%q) = %+v, %v, want %+v", tt.line, got, err, tt.want)
			}
			again, err := ParseMaps([]byte(got[0].String()))
			if err != nil || len(again) != 1 || again[0] != got[0] {
				t.Errorf("ParseMaps(%q) (String) = %+v, %v, want %+v", got[0].String(), again, err, got[0])
			}
		})
	}
}

func TestParseMapsWholeFile(t *testing.T) {
	data := "55d8561c9000-55d8561cb000 r--p 00000000 fe:00 247026 /usr/bin/cat\n" +
		"\n" +
		"7ffd3a5f4000-7ffd3a5f6000 r-xp 00000000 00:00 0 [vdso]" // no final newline
	got, err := ParseMaps([]byte(data))
	if err != nil || len(got) != 2 || got[1].Path != "[vdso]" {
		t.Fatalf("ParseMaps(%q) = %+v, %v, want 2 mappings", data, got, err)
	}
	if got, err := ParseMaps(nil); err != nil || len(got) != 0 {
		t.Errorf("ParseMaps(nil) = %v, %v, want none", got, err)
	}
}

func TestParseMapsErrors(t *testing.T) {
	tests := []struct{ name, line string }{
		{"no range", "r-xp 00000000 fe:00 1 /x"},
		{"bad start", "zz-1000 r-xp 00000000 fe:00 1 /x"},
		{"end before start", "2000-1000 r-xp 00000000 fe:00 1 /x"},
		{"short perms", "1000-2000 r-x 00000000 fe:00 1 /x"},
		{"bad offset", "1000-2000 r-xp 0000g000 fe:00 1 /x"},
		{"bad device", "1000-2000 r-xp 00000000 fe00 1 /x"},
		{"bad inode", "1000-2000 r-xp 00000000 fe:00 x1 /x"},
		{"truncated", "1000-2000 r-xp 00000000"},
	}
	for _, tt := range tests {
		got, err := ParseMaps([]byte("1000-2000 r--p 00000000 fe:00 1 /ok\n" + tt.line + "\n"))
		if !errors.Is(err, ErrMalformed) || got != nil {
			t.Errorf("%s: ParseMaps(%q) = %v, %v, want an error wrapping ErrMalformed", tt.name, tt.line, got, err)
		}
	}
}

func TestMappingDSO(t *testing.T) {
	tests := []struct {
		m    Mapping
		want string
	}{
		{Mapping{Path: "/usr/sbin/mariadbd"}, "/usr/sbin/mariadbd"},
		{Mapping{Path: "/usr/sbin/mariadbd", Deleted: true}, "/usr/sbin/mariadbd (deleted)"},
		{Mapping{}, "//anon"},
		{Mapping{Path: "[vdso]"}, "[vdso]"},
	}
	for _, tt := range tests {
		if got := tt.m.DSO(); got != tt.want {
			t.Errorf("%+v.DSO() = %q, want %q", tt.m, got, tt.want)
		}
	}
}
