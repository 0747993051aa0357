package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
)

// member has a personal field; its primary key names the data subject.
type member struct {
	ID   string `hikoutei:"id,pk"`
	Name string `hikoutei:"name,personal"`
	Tier string `hikoutei:"tier"`
}

func memberName(i int) string { return fmt.Sprintf("Zephyrine Quackenbush %d", i) }

// openMembers opens dir declaring Member.
func openMembers(t *testing.T, dir string) *hikoutei.Store {
	t.Helper()
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{HeartbeatInterval: -1}, hikoutei.Entity[member]("Member"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// memberStore is a closed store holding members M1…Mn, each with a
// personal name.
func memberStore(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	s := openMembers(t, dir)
	for i := 1; i <= n; i++ {
		u := s.Begin()
		if err := u.Persist(&member{ID: fmt.Sprintf("M%d", i), Name: memberName(i), Tier: "gold"}); err != nil {
			t.Fatal(err)
		}
		if _, err := u.Commit(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// eraseCLI erases subject with `hikoutei erase --json` and returns the
// digest it printed.
func eraseCLI(t *testing.T, dir, subject string) string {
	t.Helper()
	code, out, errOut := runSplit("erase", "--dir", dir, "--subject", subject, "--json")
	var er eraseJSON
	if code != exitOK || json.Unmarshal([]byte(out), &er) != nil {
		t.Fatalf("erase %s: exit %d\n%s%s", subject, code, out, errOut)
	}
	return er.Subject
}

// noPersonalText fails when out holds a sealed value or a member's name.
func noPersonalText(t *testing.T, what, out string, names ...int) {
	t.Helper()
	if strings.Contains(out, "hk1e:") {
		t.Errorf("%s prints sealed text:\n%s", what, out)
	}
	for _, i := range names {
		if strings.Contains(out, memberName(i)) {
			t.Errorf("%s prints the personal value of M%d:\n%s", what, i, out)
		}
	}
}

// TestAuditShowsPersonalValuesAsMarkersNeverSealedText: audit prints
// ⟦personal⟧ for a live personal value and ⟦erased⟧ once its subject was
// erased, never the sealed text; --reveal-personal opens the live values
// with keys.db and still shows the erased ones as ⟦erased⟧.
func TestAuditShowsPersonalValuesAsMarkersNeverSealedText(t *testing.T) {
	t.Parallel()
	dir := memberStore(t, 2)
	eraseCLI(t, dir, "M1")
	code, out, errOut := runSplit("audit", "--dir", dir, "--entity", "Member")
	if code != exitOK || !strings.Contains(out, `"name":"`+hikoutei.Erased+`"`) || !strings.Contains(out, `"name":"`+personalMarker+`"`) {
		t.Fatalf("audit: exit %d, want M1's name erased and M2's shown as %s:\n%s%s", code, personalMarker, out, errOut)
	}
	noPersonalText(t, "audit", out, 1, 2)
	code, out, errOut = runSplit("audit", "--dir", dir, "--json")
	if code != exitOK {
		t.Fatalf("audit --json: exit %d\n%s", code, errOut)
	}
	noPersonalText(t, "audit --json", out, 1, 2)
	code, out, errOut = runSplit("audit", "--dir", dir, "--entity", "Member", "--reveal-personal")
	if code != exitOK || !strings.Contains(out, memberName(2)) || !strings.Contains(out, hikoutei.Erased) {
		t.Fatalf("audit --reveal-personal: exit %d, want M2's name and M1's erased:\n%s%s", code, out, errOut)
	}
	noPersonalText(t, "audit --reveal-personal", out, 1)
}

// TestAuditAtShowsPersonalMarkersAndRevealsOnlyWhenAsked: the state
// `audit --at` prints shows personal values as the event lines do.
func TestAuditAtShowsPersonalMarkersAndRevealsOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	dir := memberStore(t, 1)
	args := []string{"audit", "--dir", dir, "--entity", "Member", "--id", "M1", "--at", "3"}
	code, out, errOut := runSplit(args...)
	if code != exitOK || !strings.Contains(strings.SplitN(out, "\n", 2)[0], `"name":"`+personalMarker+`"`) {
		t.Fatalf("audit --at: exit %d, want the state's name as %s:\n%s%s", code, personalMarker, out, errOut)
	}
	noPersonalText(t, "audit --at", out, 1)
	code, out, errOut = runSplit(append(args, "--reveal-personal")...)
	if code != exitOK || !strings.Contains(strings.SplitN(out, "\n", 2)[0], memberName(1)) {
		t.Fatalf("audit --at --reveal-personal: exit %d, want the name:\n%s%s", code, out, errOut)
	}
	eraseCLI(t, dir, "M1")
	code, out, errOut = runSplit(append(args, "--reveal-personal", "--json")...)
	if code != exitOK || !strings.Contains(out, hikoutei.Erased) {
		t.Fatalf("audit --at --reveal-personal after the erasure: exit %d, want %s:\n%s%s", code, hikoutei.Erased, out, errOut)
	}
	noPersonalText(t, "audit --at after the erasure", out, 1)
}

// TestAuditAtOfARunningStoreWithPersonalFields: `audit --at` of a running
// store (it reads a copy of the log, without keys.db) shows the markers
// instead of failing with personal_keys_lost; --reveal-personal is refused
// with store_locked, saying why (the running process holds keys.db).
func TestAuditAtOfARunningStoreWithPersonalFields(t *testing.T) {
	t.Parallel()
	dir := memberStore(t, 1)
	s := openMembers(t, dir)
	defer s.Close()
	args := []string{"audit", "--dir", dir, "--entity", "Member", "--id", "M1", "--at", "3"}
	code, out, errOut := runSplit(args...)
	if code != exitOK || !strings.Contains(out, personalMarker) {
		t.Fatalf("audit --at of a running store: exit %d, want %s:\n%s%s", code, personalMarker, out, errOut)
	}
	noPersonalText(t, "audit --at of a running store", out, 1)
	code, out, errOut = runSplit("audit", "--dir", dir)
	if code != exitOK || !strings.Contains(out, personalMarker) {
		t.Fatalf("audit of a running store: exit %d\n%s%s", code, out, errOut)
	}
	noPersonalText(t, "audit of a running store", out, 1)
	for _, a := range [][]string{append(args, "--reveal-personal"), {"audit", "--dir", dir, "--reveal-personal"}} {
		code, out, errOut = runSplit(a...)
		if code != exitFailure || !strings.Contains(errOut, "store_locked") || !strings.Contains(errOut, "--reveal-personal") ||
			strings.Contains(errOut, "personal_keys_lost") {
			t.Errorf("%v of a running store: exit %d, want 1 with store_locked naming --reveal-personal:\n%s%s", a[1:], code, out, errOut)
		}
	}
}

// TestAuditListsErasuresAndVerifiesAfterMany: after many erasures (one
// subject twice, one that never had a personal value) `audit verify`
// passes and `audit --erasures` lists each by its digest (never the
// subject), when and by whom.
func TestAuditListsErasuresAndVerifiesAfterMany(t *testing.T) {
	t.Parallel()
	dir := memberStore(t, 6)
	var digests []string
	for _, subject := range []string{"M1", "M2", "M3", "M4", "M5", "M2", "nobody"} {
		digests = append(digests, eraseCLI(t, dir, subject))
	}
	if code, out := runCLI(t, "audit", "verify", "--dir", dir); code != exitOK {
		t.Fatalf("audit verify after %d erasures: exit %d\n%s", len(digests), code, out)
	}
	code, out, errOut := runSplit("audit", "--dir", dir, "--erasures", "--json")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != exitOK || len(lines) != len(digests) {
		t.Fatalf("audit --erasures: exit %d, want %d lines:\n%s%s", code, len(digests), out, errOut)
	}
	hex32 := regexp.MustCompile(`^[0-9a-f]{32}$`)
	for i, line := range lines {
		var ev struct {
			Type    string
			At      string
			Payload struct{ Subject, Actor string }
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatal(err)
		}
		p := ev.Payload
		if ev.Type != string(events.TypeSubjectErased) || p.Subject != digests[i] || !hex32.MatchString(p.Subject) || p.Actor != "cli" || ev.At == "" {
			t.Errorf("erasure %d: %s, want subject %s by cli", i, line, digests[i])
		}
	}
	_, out, _ = runSplit("audit", "--dir", dir, "--erasures")
	if strings.Contains(out, `"M1"`) || strings.Count(out, string(events.TypeSubjectErased)) != len(digests) {
		t.Errorf("audit --erasures names a subject in clear or misses one:\n%s", out)
	}
	_, out, _ = runSplit("audit", "--dir", dir, "--entity", "Member", "--reveal-personal")
	if !strings.Contains(out, memberName(6)) {
		t.Errorf("M6 (not erased) is not revealed:\n%s", out)
	}
	noPersonalText(t, "audit after the erasures", out, 1, 2, 3, 4, 5)
}

// TestAuditBeforeADamagedErasureStillAudits: an erasure record that
// cannot be read does not stop an audit of the records before it (as
// before personal fields): its subject's values show as ⟦personal⟧,
// never in clear, and stderr says the erasures were not all read.
func TestAuditBeforeADamagedErasureStillAudits(t *testing.T) {
	t.Parallel()
	dir := memberStore(t, 1)
	code, out, errOut := runSplit("erase", "--dir", dir, "--subject", "M1", "--json")
	var er eraseJSON
	if code != exitOK || json.Unmarshal([]byte(out), &er) != nil {
		t.Fatalf("erase: exit %d\n%s%s", code, out, errOut)
	}
	editClosedLog(t, dir, func(ev *bolt.Bucket, _ uint64) error {
		key := binary.BigEndian.AppendUint64(nil, er.Seq)
		raw := slices.Clone(ev.Get(key))
		raw[len(raw)/2] ^= 0xff
		return ev.Put(key, raw)
	})
	code, out, errOut = runSplit("audit", "--dir", dir, "--to", fmt.Sprint(er.Seq-1))
	if code != exitOK || !strings.Contains(out, personalMarker) || !strings.Contains(errOut, "erasures could not all be read") {
		t.Fatalf("audit before a damaged erasure: exit %d, want %s and a note:\n%s%s", code, personalMarker, out, errOut)
	}
	noPersonalText(t, "audit before a damaged erasure", out, 1)
}

// TestAuditPersonalFlagsUsage: --reveal-personal needs --dir (a mirror
// or a replicated stream has no key file); --erasures excludes --entity.
func TestAuditPersonalFlagsUsage(t *testing.T) {
	t.Parallel()
	dir := memberStore(t, 0)
	for _, args := range [][]string{
		{"audit", "--nats", "nats://127.0.0.1:1", "--stream", "S", "--reveal-personal"},
		{"audit", "--nats", "nats://127.0.0.1:1", "--store", "s", "--reveal-personal"},
		{"audit", "--dir", dir, "--erasures", "--entity", "Member"},
	} {
		if code, out, errOut := runSplit(args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d:\n%s%s", args[1:], code, exitUsage, out, errOut)
		}
	}
}

// TestI37_AuditHidesValuesWrittenBeforeTheFieldWasPersonal: a value
// written while its field was not personal is in the log in clear; once
// the field is personal (keys.db records it), audit shows it as
// ⟦personal⟧ as it does a sealed one, and erase --json says it did not
// count such values (in_clear -1).
func TestI37_AuditHidesValuesWrittenBeforeTheFieldWasPersonal(t *testing.T) {
	t.Parallel()
	type memberV1 struct {
		ID   string `hikoutei:"id,pk"`
		Name string `hikoutei:"name"`
		Tier string `hikoutei:"tier"`
	}
	dir := t.TempDir()
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{HeartbeatInterval: -1}, hikoutei.Entity[memberV1]("Member"))
	if err != nil {
		t.Fatal(err)
	}
	u := s.Begin()
	if err := u.Persist(&memberV1{ID: "M1", Name: memberName(1), Tier: "gold"}); err != nil {
		t.Fatal(err)
	}
	if _, err := u.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := openMembers(t, dir).Close(); err != nil { // Name is personal now
		t.Fatal(err)
	}
	for _, args := range [][]string{{"audit", "--dir", dir}, {"audit", "--dir", dir, "--json"}, {"audit", "--dir", dir, "--entity", "Member", "--id", "M1", "--at", "3"}} {
		code, out, errOut := runSplit(args...)
		if code != exitOK || !strings.Contains(out, personalMarker) {
			t.Fatalf("%v: exit %d, want the name as %s:\n%s%s", args, code, personalMarker, out, errOut)
		}
		noPersonalText(t, strings.Join(args, " "), out, 1)
	}
	code, out, errOut := runSplit("erase", "--dir", dir, "--subject", "M1", "--json")
	var er eraseJSON
	if code != exitOK || json.Unmarshal([]byte(out), &er) != nil || er.InClear != -1 {
		t.Fatalf("erase --json: exit %d, want in_clear -1:\n%s%s", code, out, errOut)
	}
}
