package main

import (
	"fmt"
	"strings"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/replication/replicationtest"
)

// TestI37_AMirrorAuditShowsAnErasedSubjectAsErased: audit --nats reads the
// mirror's subject.erased events before it prints, so the values of an
// erased subject show as ⟦erased⟧ there too, a live one's as ⟦personal⟧,
// and never their sealed text.
func TestI37_AMirrorAuditShowsAnErasedSubjectAsErased(t *testing.T) {
	url := replicationtest.StartCluster(t, 1).URLs()
	const stream = "HIKOUTEI_MEMBERS_AUDIT"
	s, err := hikoutei.Open(t.Context(), t.TempDir(), hikoutei.Options{HeartbeatInterval: -1, NoAdmin: true,
		NATS: &hikoutei.NATSOptions{URL: url, Store: "members", Mirror: true, MirrorStream: stream}}, hikoutei.Entity[member]("Member"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := 1; i <= 2; i++ {
		u := s.Begin()
		if err := u.Persist(&member{ID: fmt.Sprintf("M%d", i), Name: memberName(i), Tier: "gold"}); err != nil {
			t.Fatal(err)
		}
		if _, err := u.Commit(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Erase(t.Context(), "M1"); err != nil {
		t.Fatal(err)
	}
	var out string
	waitFor(t, "the mirror holds the erasure", func() bool {
		var code int
		code, out = runCLI(t, "audit", "--nats", url, "--stream", stream, "--entity", "Member")
		return code == exitOK && strings.Count(out, string(events.TypeEntityPersisted)) == 2 && strings.Contains(out, hikoutei.Erased)
	})
	noPersonalText(t, "audit --nats", out, 1, 2)
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.Contains(line, string(events.TypeEntityPersisted)) {
			continue // stderr's notes
		}
		erased := strings.Contains(line, "Member/M1")
		if erased != strings.Contains(line, hikoutei.Erased) || erased == strings.Contains(line, personalMarker) {
			t.Errorf("line shows the wrong marker (M1 erased, M2 live):\n%s", line)
		}
	}
}
