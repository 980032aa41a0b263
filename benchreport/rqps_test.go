package benchreport

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// TestRQPSTextAligned: rqps.txt's table is aligned in a fixed-width font
// (its last column holds numbers, right-aligned, so every line of the
// table ends in the same column), holds no escape sequence and no
// character but ASCII and the noise mark; rqps.csv has one numeric cell
// per version, empty where a version has no figure.
func TestRQPSTextAligned(t *testing.T) {
	runs := fixtureRuns()
	runs = append(runs[:2], runs[3:]...) // point-select on 11.8 missing
	opts := fixtureOptions(t)
	r := mustBuild(t, runs, opts)
	var b bytes.Buffer
	if err := r.WriteRQPSText(&b); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	blocks := strings.Split(text, "\n\n")
	if len(blocks) != 3 || !strings.Contains(blocks[0], "base 10.11") {
		t.Fatalf("rqps.txt = %q, want a line naming the base, the table, the notes", text)
	}
	lines := strings.Split(blocks[1], "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[1], "----") {
		t.Fatalf("table %q: want a head, a rule and two rows", blocks[1])
	}
	for _, l := range lines {
		if n, want := len([]rune(l)), len([]rune(lines[0])); n != want {
			t.Errorf("line %q is %d runes wide, the head %d", l, n, want)
		}
	}
	for _, c := range text {
		if c > 127 && string(c) != noise || c < 32 && c != '\n' {
			t.Errorf("rqps.txt holds %q", c)
		}
	}
	if want := "point-select  1.11   1.00     -\n"; !strings.Contains(text, want) {
		t.Errorf("rqps.txt lacks %q (11.8 missing):\n%s", want, text)
	}
	b.Reset()
	if err := r.WriteRQPSCSV(&b); err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(rows) != 3 || rows[0] != "workload,10.5,10.11,11.8" {
		t.Fatalf("rqps.csv = %q", b.String())
	}
	for _, row := range rows[1:] {
		cells := strings.Split(row, ",")
		for i, c := range cells[1:] {
			if _, err := strconv.ParseFloat(c, 64); err != nil && (c != "" || cells[0] != "point-select" || i != 2) {
				t.Errorf("rqps.csv row %q cell %d %q: not a number, nor empty where missing", row, i+1, c)
			}
		}
	}
	if !strings.HasSuffix(rows[1], ",") {
		t.Errorf("rqps.csv row %q: want an empty cell for the missing 11.8", rows[1])
	}
}
