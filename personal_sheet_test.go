package hikoutei_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/observe"
)

type member struct {
	ID    string `hikoutei:"id,pk"`
	Email string `hikoutei:"email,personal"`
	Team  string `hikoutei:"team"`
}

const memberEmail = "member.quixotic.51ab@example.invalid"

// TestI37_TheSheetHoldsOnlySealedText: a personal field reaches the
// spreadsheet's tabs (System and Input) as sealed text only, before and
// after the erasure; the store's own cells never show the value.
func TestI37_TheSheetHoldsOnlySealedText(t *testing.T) {
	ctx := context.Background()
	sheet := hikouteitest.NewSheet(t)
	s, err := hikoutei.Open(ctx, t.TempDir(), hikoutei.Options{Sync: sheet.SyncOptions(), HeartbeatInterval: -1, NoAdmin: true},
		hikoutei.Entity[member]("Member"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h := hikouteitest.New(t, s)
	u := s.Begin()
	if err := u.Persist(&member{ID: "m-1", Email: memberEmail, Team: "blue"}); err != nil {
		t.Fatal(err)
	}
	if _, err := u.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	h.Drain(ctx)
	check := func(when string) {
		sealed := 0
		for _, tab := range []string{"Member_System", "Member_Input"} {
			rows, err := sheet.Person().Displayed(tab)
			if err != nil {
				t.Fatalf("%s: %s: %v", when, tab, err)
			}
			for _, r := range rows {
				for _, cell := range r {
					if strings.Contains(cell, memberEmail) {
						t.Fatalf("%s: %s shows the personal value", when, tab)
					}
					if strings.HasPrefix(cell, "hk1e:") {
						sealed++
					}
				}
			}
		}
		if sealed == 0 {
			t.Fatalf("%s: no sealed cell on the tabs", when)
		}
	}
	check("before the erasure")
	if _, err := s.Erase(ctx, "m-1"); err != nil {
		t.Fatal(err)
	}
	h.Drain(ctx)
	check("after the erasure")
	got, err := hikoutei.Get[member](ctx, s, "m-1")
	if err != nil || got.Email != hikoutei.Erased || got.Team != "blue" {
		t.Fatalf("%+v %v", got, err)
	}
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
