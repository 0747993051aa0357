package hikoutei_test

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/observe"
	"zombiezen.com/go/sqlite"
)

type member struct {
	ID    string `hikoutei:"id,pk"`
	Email string `hikoutei:"email,personal"`
	Team  string `hikoutei:"team"`
	Note  string `hikoutei:"note,user"`
}

const memberEmail = "member.quixotic.51ab@example.invalid"

// memberRig is a store of members syncing to an emulated sheet by hand.
type memberRig struct {
	dir   string
	sheet *hikouteitest.Sheet
	s     *hikoutei.Store
	h     *hikouteitest.Harness
}

func openMembers(t *testing.T, dir string, sheet *hikouteitest.Sheet) *memberRig {
	t.Helper()
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{Sync: sheet.SyncOptions(), HeartbeatInterval: -1, NoAdmin: true},
		hikoutei.Entity[member]("Member"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &memberRig{dir: dir, sheet: sheet, s: s, h: hikouteitest.New(t, s)}
}

func (r *memberRig) persist(t *testing.T, m *member) {
	t.Helper()
	u := r.s.Begin()
	if err := u.Persist(m); err != nil {
		t.Fatal(err)
	}
	if _, err := u.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// cells counts, on both tabs of Member, the cells holding want, the cells
// holding sealed text, and fails if one holds the value forbidden.
func (r *memberRig) cells(t *testing.T, when, want, forbidden string) (found, sealed int) {
	t.Helper()
	for _, tab := range []string{"Member_System", "Member_Input"} {
		rows, err := r.sheet.Person().Displayed(tab)
		if err != nil {
			t.Fatalf("%s: %s: %v", when, tab, err)
		}
		for _, row := range rows {
			for _, cell := range row {
				if forbidden != "" && strings.Contains(cell, forbidden) {
					t.Fatalf("%s: %s shows the personal value", when, tab)
				}
				if cell == want {
					found++
				}
				if strings.HasPrefix(cell, "hk1e:") {
					sealed++
				}
			}
		}
	}
	return found, sealed
}

// quiet runs a reconciliation (anti-entropy included) and fails if it
// queued a write: the sheet already shows canonical state.
func (r *memberRig) quiet(t *testing.T, when string) {
	t.Helper()
	before := r.h.Outbox()
	if _, err := r.h.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	if after := r.h.Outbox(); r.h.Unsettled() != 0 || !maps.Equal(before, after) {
		t.Fatalf("%s: anti-entropy took the sheet for drifted: %v, then %v", when, before, after)
	}
}

// TestI37_TheSheetShowsTheValueUntilErased: a personal field's cell shows
// the readable value while the subject's key exists (anti-entropy takes
// it for canonical state, not drift); after Erase returns and the sync
// drains, no cell of either tab holds the value, the System cell shows
// the marker readers see, and log.db never held the value in clear.
func TestI37_TheSheetShowsTheValueUntilErased(t *testing.T) {
	r := openMembers(t, t.TempDir(), hikouteitest.NewSheet(t))
	r.persist(t, &member{ID: "m-1", Email: memberEmail, Team: "blue"})
	r.persist(t, &member{ID: "m-2", Email: "other.person.51ab@example.invalid", Team: "red"})
	r.h.Drain(t.Context())
	if found, sealed := r.cells(t, "before the erasure", memberEmail, ""); found != 1 || sealed != 0 {
		t.Fatalf("before the erasure: %d cells show the value, %d sealed text, want 1 and 0", found, sealed)
	}
	r.quiet(t, "before the erasure")
	if in := tabText(t, r.sheet, "Member_Input"); strings.Contains(in, "email") || !strings.Contains(in, "note") {
		t.Fatalf("the Input tab shows a personal column (its cells could hold notes, conflicts, quarantine):\n%s", in)
	}
	if _, err := r.s.Erase(t.Context(), "m-1"); err != nil {
		t.Fatal(err)
	}
	if r.h.Unsettled() == 0 {
		t.Fatal("Erase queued no rewrite of the subject's cells")
	}
	r.h.Drain(t.Context())
	if found, sealed := r.cells(t, "after the erasure", hikoutei.Erased, memberEmail); found != 1 || sealed != 0 {
		t.Fatalf("after the erasure: %d cells show the marker, %d sealed text, want 1 and 0", found, sealed)
	}
	if found, _ := r.cells(t, "after the erasure", "other.person.51ab@example.invalid", ""); found != 1 {
		t.Fatal("another subject's cell lost its value")
	}
	r.quiet(t, "after the erasure")
	if rep := observe.Report(r.s.Health()); rep.Status != "ok" {
		t.Fatalf("health after the erasure: %+v", rep)
	}
	got, err := hikoutei.Get[member](t.Context(), r.s, "m-1")
	if err != nil || got.Email != hikoutei.Erased || got.Team != "blue" {
		t.Fatalf("%+v %v", got, err)
	}
	logBytes, err := os.ReadFile(filepath.Join(r.dir, "log.db"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(logBytes, []byte(memberEmail)) || !bytes.Contains(logBytes, []byte("hk1e:")) {
		t.Fatal("log.db holds the personal value in clear, or no sealed value")
	}
}

// TestI37_AnEditOfAnErasedCellResurrectsNothing: a person types a value
// into an erased subject's personal cell. Personal fields are never on the
// Input tab, so the edit is damage to the System tab: a reconciliation
// rewrites the marker (its correction is the recorded outcome), the record
// stays erased, and the typed text never reaches log.db.
func TestI37_AnEditOfAnErasedCellResurrectsNothing(t *testing.T) {
	r := openMembers(t, t.TempDir(), hikouteitest.NewSheet(t))
	r.persist(t, &member{ID: "m-1", Email: memberEmail, Team: "blue"})
	r.h.Drain(t.Context())
	if _, err := r.s.Erase(t.Context(), "m-1"); err != nil {
		t.Fatal(err)
	}
	r.h.Drain(t.Context())
	const typed = "typed.again.51ab@example.invalid"
	if err := r.sheet.Person().Type("Member_System", "B2", typed); err != nil {
		t.Fatal(err)
	}
	if _, err := r.h.Poll(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := r.h.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	r.h.Drain(t.Context())
	if found, _ := r.cells(t, "after the reconciliation", hikoutei.Erased, typed); found != 1 {
		t.Fatalf("the erased cell shows the marker %d times, want 1", found)
	}
	got, err := hikoutei.Get[member](t.Context(), r.s, "m-1")
	if err != nil || got.Email != hikoutei.Erased {
		t.Fatalf("%+v %v", got, err)
	}
	logBytes, err := os.ReadFile(filepath.Join(r.dir, "log.db"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(logBytes, []byte(typed)) {
		t.Fatal("the typed value reached log.db")
	}
}

// TestPersonalSheetFromAnEarlierBuildConverges: a store an earlier build
// synced shows a personal field's sealed text in the sheet; once opened by
// this build, a reconciliation finds those cells differ from what they
// should show and rewrites them with the readable value.
func TestPersonalSheetFromAnEarlierBuildConverges(t *testing.T) {
	r := openMembers(t, t.TempDir(), hikouteitest.NewSheet(t))
	r.persist(t, &member{ID: "m-1", Email: memberEmail, Team: "blue"})
	r.h.Drain(t.Context())
	sealed := sealedEmail(t, r.dir, "m-1")
	// What an earlier build wrote: the read model's sealed text.
	if err := r.sheet.Person().Type("Member_System", "B2", sealed); err != nil {
		t.Fatal(err)
	}
	if _, n := r.cells(t, "as an earlier build left it", memberEmail, memberEmail); n != 1 {
		t.Fatalf("the sheet shows %d sealed cells, want 1", n)
	}
	if _, err := r.h.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	r.h.Drain(t.Context())
	if found, n := r.cells(t, "after a reconciliation", memberEmail, ""); found != 1 || n != 0 {
		t.Fatalf("after a reconciliation: %d cells show the value, %d sealed text", found, n)
	}
	r.quiet(t, "after the upgrade")
}

// TestI37_AnErasureWithoutTypesReachesTheSheet: an erasure made while
// the store was opened without Go types and without sync (as hikoutei
// erase does) queues no write; the first reconciliation once the store
// syncs again finds the cell still showing the value and writes the
// marker.
func TestI37_AnErasureWithoutTypesReachesTheSheet(t *testing.T) {
	dir, sheet := t.TempDir(), hikouteitest.NewSheet(t)
	r := openMembers(t, dir, sheet)
	r.persist(t, &member{ID: "m-1", Email: memberEmail, Team: "blue"})
	r.h.Drain(t.Context())
	if err := r.s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := hikoutei.OpenDeclared(t.Context(), dir, hikoutei.Options{Operation: "erase", HeartbeatInterval: -1, NoAdmin: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Erase(t.Context(), "m-1", hikoutei.ErasedBy(hikoutei.ActorCLI)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if found, _ := r.cells(t, "after the erasure, before the sync", memberEmail, ""); found != 1 {
		t.Fatalf("the cell shows the value %d times before the sync ran", found)
	}
	r = openMembers(t, dir, sheet)
	if _, err := r.h.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	r.h.Drain(t.Context())
	if found, _ := r.cells(t, "after a reconciliation", hikoutei.Erased, memberEmail); found != 1 {
		t.Fatalf("the erased cell shows the marker %d times, want 1", found)
	}
}

// TestPersonalSheetWithALostKeyFile: a store whose key file was lost
// cannot open the values it holds; the sheet then shows their sealed text,
// never an empty cell, the sync goes on, and health says why.
func TestPersonalSheetWithALostKeyFile(t *testing.T) {
	dir, sheet := t.TempDir(), hikouteitest.NewSheet(t)
	r := openMembers(t, dir, sheet)
	r.persist(t, &member{ID: "m-1", Email: memberEmail, Team: "blue"})
	r.h.Drain(t.Context())
	if err := r.s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "keys.db")); err != nil {
		t.Fatal(err)
	}
	r = openMembers(t, dir, sheet)
	if _, err := r.h.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	r.h.Drain(t.Context())
	if found, sealed := r.cells(t, "with the key file lost", memberEmail, ""); found != 0 || sealed != 1 {
		t.Fatalf("with the key file lost: %d cells show the value, %d sealed text, want 0 and 1", found, sealed)
	}
	if rep := observe.Report(r.s.Health()); rep.KeysCode != "personal_keys_lost" {
		t.Fatalf("health: %+v", rep)
	}
}

// sealedEmail reads the sealed text the read model holds for member id.
func sealedEmail(t *testing.T, dir, id string) string {
	t.Helper()
	conn, err := sqlite.OpenConn(filepath.Join(dir, "read.sqlite"), sqlite.OpenReadOnly)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	st, err := conn.Prepare(`SELECT "email" FROM "Member" WHERE "id" = ?`)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Finalize()
	st.BindText(1, id)
	if ok, err := st.Step(); err != nil || !ok {
		t.Fatalf("member %s: %v", id, err)
	}
	v := st.ColumnText(0)
	if !strings.HasPrefix(v, "hk1e:") {
		t.Fatalf("the read model holds %q, not sealed text", v)
	}
	return v
}

// A lost key file fails /healthz with its code.
func TestPersonalKeysLostFailsHealthz(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	open := func() *hikoutei.Store {
		s, err := hikoutei.Open(ctx, dir, hikoutei.Options{HeartbeatInterval: -1, NoAdmin: true}, hikoutei.Entity[member]("Member"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open()
	u := s.Begin()
	if err := u.Persist(&member{ID: "m-1", Email: memberEmail}); err != nil {
		t.Fatal(err)
	}
	if _, err := u.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if r := observe.Report(s.Health()); r.Status != "ok" || r.KeysCode != "" {
		t.Fatalf("healthy store: %+v", r)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "keys.db")); err != nil {
		t.Fatal(err)
	}
	s = open()
	defer s.Close()
	if r := observe.Report(s.Health()); r.Status != "failing" || r.KeysCode != "personal_keys_lost" {
		t.Fatalf("keys.db gone: %+v", r)
	}
}

type patient struct {
	ID    string `hikoutei:"id,pk"`
	Email string `hikoutei:"email,personal"`
	SSN   string `hikoutei:"ssn,personal,nosheet"`
	Ward  string `hikoutei:"ward,nosheet"`
}

// patientBefore is patient before its ssn field took nosheet.
type patientBefore struct {
	ID    string `hikoutei:"id,pk"`
	Email string `hikoutei:"email,personal"`
	SSN   string `hikoutei:"ssn,personal"`
	Ward  string `hikoutei:"ward,nosheet"`
}

const patientSSN = "078-05-1120-quixotic-51ab"

// tabText is every cell tab displays, header included, joined.
func tabText(t *testing.T, sheet *hikouteitest.Sheet, tab string) string {
	t.Helper()
	rows, err := sheet.Person().Displayed(tab)
	if err != nil {
		t.Fatalf("%s: %v", tab, err)
	}
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(strings.Join(r, "\t"))
		b.WriteByte('\n')
	}
	return b.String()
}

// TestNoSheetFieldNeverReachesTheSheet: a field tagged nosheet has no
// column on any tab and its value is in no cell; the API reads it as any
// other field, and the sheet stays in step (anti-entropy quiet).
func TestNoSheetFieldNeverReachesTheSheet(t *testing.T) {
	sheet := hikouteitest.NewSheet(t)
	s, err := hikoutei.Open(t.Context(), t.TempDir(), hikoutei.Options{Sync: sheet.SyncOptions(), HeartbeatInterval: -1, NoAdmin: true},
		hikoutei.Entity[patient]("Patient"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h := hikouteitest.New(t, s)
	u := s.Begin()
	if err := u.Persist(&patient{ID: "p-1", Email: memberEmail, SSN: patientSSN, Ward: "ward-nine-51ab"}); err != nil {
		t.Fatal(err)
	}
	if _, err := u.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	h.Drain(t.Context())
	text := tabText(t, sheet, "Patient_System")
	if strings.Contains(text, "ssn") || strings.Contains(text, "ward") || strings.Contains(text, patientSSN) ||
		strings.Contains(text, "ward-nine-51ab") || !strings.Contains(text, memberEmail) {
		t.Fatalf("the System tab:\n%s", text)
	}
	got, err := hikoutei.Get[patient](t.Context(), s, "p-1")
	if err != nil || got.SSN != patientSSN || got.Ward != "ward-nine-51ab" {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := h.Reconcile(t.Context()); err != nil || h.Unsettled() != 0 {
		t.Fatalf("anti-entropy: %v, %d unsettled", err, h.Unsettled())
	}
}

// The primary key and user fields cannot be nosheet.
func TestNoSheetDeclaration(t *testing.T) {
	type keyNoSheet struct {
		ID string `hikoutei:"id,pk,nosheet"`
	}
	type userNoSheet struct {
		ID   string `hikoutei:"id,pk"`
		Note string `hikoutei:"note,user,nosheet"`
	}
	for name, def := range map[string]hikoutei.EntityDef{"key": hikoutei.Entity[keyNoSheet]("K"), "user": hikoutei.Entity[userNoSheet]("U")} {
		if _, err := hikoutei.Open(t.Context(), t.TempDir(), hikoutei.Options{NoAdmin: true}, def); !errors.Is(err, hikoutei.ErrInvalidEntity) {
			t.Fatalf("%s field nosheet: %v", name, err)
		}
	}
}

// TestNoSheetAddedLaterTakesTheColumnAway: a field shown in the sheet that
// takes nosheet later leaves it: the layout migration takes its column
// away and its values with it; removing nosheet brings them back.
func TestNoSheetAddedLaterTakesTheColumnAway(t *testing.T) {
	sheet := hikouteitest.NewSheet(t)
	dir := t.TempDir()
	opts := hikoutei.Options{Sync: sheet.SyncOptions(), HeartbeatInterval: -1, NoAdmin: true}
	s, err := hikoutei.Open(t.Context(), dir, opts, hikoutei.Entity[patientBefore]("Patient"))
	if err != nil {
		t.Fatal(err)
	}
	h := hikouteitest.New(t, s)
	u := s.Begin()
	if err := u.Persist(&patientBefore{ID: "p-1", Email: memberEmail, SSN: patientSSN}); err != nil {
		t.Fatal(err)
	}
	if _, err := u.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	h.Drain(t.Context())
	if text := tabText(t, sheet, "Patient_System"); !strings.Contains(text, patientSSN) {
		t.Fatalf("before nosheet:\n%s", text)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = hikoutei.Open(t.Context(), dir, opts, hikoutei.Entity[patient]("Patient"))
	if err != nil {
		t.Fatal(err)
	}
	h = hikouteitest.New(t, s)
	h.Drain(t.Context())
	if _, err := h.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	h.Drain(t.Context())
	if text := tabText(t, sheet, "Patient_System"); strings.Contains(text, patientSSN) || strings.Contains(text, "ssn") {
		t.Fatalf("after nosheet:\n%s", text)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Removing nosheet brings the column back, filled from canonical state.
	s, err = hikoutei.Open(t.Context(), dir, opts, hikoutei.Entity[patientBefore]("Patient"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h = hikouteitest.New(t, s)
	h.Drain(t.Context())
	if _, err := h.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	h.Drain(t.Context())
	if text := tabText(t, sheet, "Patient_System"); !strings.Contains(text, patientSSN) {
		t.Fatalf("nosheet removed:\n%s", text)
	}
}
