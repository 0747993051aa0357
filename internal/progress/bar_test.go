package progress

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeClock advances only when told to.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// Not on a terminal, a bar writes plain lines: one per tenth of the work
// with the elapsed time and the time left, and one when it ends; never a
// carriage return or an escape sequence.
func TestPlainBarWritesALinePerTenthAndNoCarriageReturn(t *testing.T) {
	var out bytes.Buffer
	clock := &fakeClock{t: time.Unix(0, 0)}
	b := newBar(&out, 0, "replaying", false, clock.now)
	b.SetMax(1000)
	for n := int64(1); n <= 1000; n++ {
		clock.t = clock.t.Add(10 * time.Millisecond)
		b.Set(n)
	}
	b.Finish()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 10 {
		t.Fatalf("%d lines, want 9 tenths and the end:\n%s", len(lines), out.String())
	}
	if want := "replaying: 50% (500/1000) elapsed 5s, about 5s left"; lines[4] != want {
		t.Errorf("line 5 %q, want %q", lines[4], want)
	}
	if want := "replaying: done (1000) in 10s"; lines[9] != want {
		t.Errorf("last line %q, want %q", lines[9], want)
	}
	if strings.ContainsAny(out.String(), "\r\x1b") {
		t.Fatalf("plain output holds a carriage return or an escape:\n%q", out.String())
	}
}

// A regular file is not a terminal: New picks plain lines for it.
func TestNewWritesPlainLinesToAFile(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "progress"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) {
		t.Fatal("a regular file reported as a terminal")
	}
	b := New(f, 4, "commit")
	for n := int64(1); n <= 4; n++ {
		b.Set(n)
	}
	b.Finish()
	data, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "\r") || !strings.Contains(string(data), "commit: done (4)") {
		t.Fatalf("file holds %q", data)
	}
}

// On a terminal the bar redraws in place and shows the elapsed time and
// the time left; Finish draws it complete (100%) even when the last
// reported count fell short.
func TestTerminalBarShowsElapsedAndTimeLeftAndEndsAtFullCount(t *testing.T) {
	var out bytes.Buffer
	b := newBar(&out, 100, "replaying", true, time.Now)
	b.Set(97)
	b.Finish()
	s := out.String()
	if !strings.Contains(s, "\r") || !strings.Contains(s, "100%") || !strings.Contains(s, "(100/100") {
		t.Fatalf("terminal output %q: want a redraw ending at 100%% (100/100)", s)
	}
	if !strings.Contains(s, "[") || !strings.Contains(s, ":") {
		t.Fatalf("terminal output %q shows no [elapsed:left] times", s)
	}
}
