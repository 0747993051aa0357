package main

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
)

// forgeSalvageHole removes record hole, records it as lost to a salvage
// in the meta bucket, edits the record after it and re-links every later
// record, as someone hiding an edit behind a made-up salvage would.
func forgeSalvageHole(t *testing.T, dir string, hole uint64) {
	t.Helper()
	editClosedLog(t, dir, func(ev *bolt.Bucket, head uint64) error {
		key := func(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }
		if err := ev.Delete(key(hole)); err != nil {
			return err
		}
		var c events.ChainHash
		for seq := hole + 1; seq <= head; seq++ {
			e, err := events.DecodeRecord(seq, ev.Get(key(seq)))
			if err != nil {
				return err
			}
			if seq == hole+1 {
				e.At = e.At.Add(1)
			} else {
				e.Link = c
			}
			rec, err := events.MarshalRecord(e)
			if err != nil {
				return err
			}
			if c, _, err = events.RecordChainValue(rec); err != nil {
				return err
			}
			if err := ev.Put(key(seq), rec); err != nil {
				return err
			}
		}
		return ev.Tx().Bucket([]byte("meta")).Put([]byte("salvage_lost"), []byte("5"))
	})
}

// A salvage hole is no silent pass: with one forged, audit verify prints
// what it walked and the hole and exits 3 with chain_restarted;
// --accept-salvage-holes exits 0 still printing the hole; a head pinned
// before the forgery then fails as chain_pin_mismatch.
func TestI33_AuditVerifyRefusesASalvageHoleUnlessAccepted(t *testing.T) {
	s := openItemStore(t, 12)
	dir := s.Dir()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_, before := runCLI(t, "audit", "verify", "--dir", dir)
	m := chainHeadLine.FindStringSubmatch(before)
	if m == nil {
		t.Fatalf("no head printed:\n%s", before)
	}
	forgeSalvageHole(t, dir, 5)
	code, out := runCLI(t, "audit", "verify", "--dir", dir)
	if code != exitDamage || !strings.Contains(out, "chain_restarted: seq 5 lost to a salvage; the chain restarts at seq 6") ||
		!strings.Contains(out, "salvage hole: seq 5 lost") || !chainHeadLine.MatchString(out) {
		t.Fatalf("a forged hole: exit %d, want %d:\n%s", code, exitDamage, out)
	}
	code, jsonOut, _ := runSplit("audit", "verify", "--dir", dir, "--json")
	var rep verifyJSON
	if code != exitDamage || json.Unmarshal([]byte(jsonOut), &rep) != nil || rep.Error != "chain_restarted" || len(rep.Restarts) != 1 || rep.Restarts[0].At != 6 {
		t.Fatalf("a forged hole, --json: exit %d:\n%s", code, jsonOut)
	}
	code, out = runCLI(t, "audit", "verify", "--dir", dir, "--accept-salvage-holes")
	if code != exitOK || !strings.Contains(out, "salvage hole: seq 5 lost; the chain restarts at seq 6") {
		t.Fatalf("holes accepted: exit %d:\n%s", code, out)
	}
	code, out = runCLI(t, "audit", "verify", "--dir", dir, "--accept-salvage-holes", "--pin", m[1]+":"+m[2])
	if code != exitDamage || !strings.Contains(out, "chain_pin_mismatch") {
		t.Fatalf("holes accepted, a head pinned before the forgery: exit %d:\n%s", code, out)
	}
}

// F4, the red team's repro: one record deleted and named in salvage_lost,
// nothing re-linked (the next link still commits to the deleted record).
// audit verify --accept-salvage-holes --pin <a pin taken before> fails
// with chain_pin_mismatch naming the hole, and doctor does not say healthy
// (exit 5, "holes found"). Once the store opened again and recorded the
// hole, a head pinned after that vouches, the old pin still fails, and
// doctor still reports the hole (with where it was recorded).
func TestF4_APinFromBeforeAForgedHoleFailsAndDoctorIsNotHealthy(t *testing.T) {
	t.Parallel()
	s := openItemStore(t, 12)
	dir := s.Dir()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_, before := runCLI(t, "audit", "verify", "--dir", dir)
	m := chainHeadLine.FindStringSubmatch(before)
	if m == nil {
		t.Fatalf("no head printed:\n%s", before)
	}
	oldPin := m[1] + ":" + m[2]
	editClosedLog(t, dir, func(ev *bolt.Bucket, _ uint64) error {
		if err := ev.Delete(binary.BigEndian.AppendUint64(nil, 5)); err != nil {
			return err
		}
		return ev.Tx().Bucket([]byte("meta")).Put([]byte("salvage_lost"), []byte("5"))
	})
	rms, _ := filepath.Glob(filepath.Join(dir, hikoutei.ReadModelFile+"*"))
	for _, f := range rms {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	refused := func() {
		t.Helper()
		code, out := runCLI(t, "audit", "verify", "--dir", dir, "--accept-salvage-holes", "--pin", oldPin)
		if code != exitDamage || !strings.Contains(out, "chain_pin_mismatch") || !strings.Contains(out, "predates salvage hole 5") {
			t.Fatalf("holes accepted, a head pinned before the hole: exit %d:\n%s", code, out)
		}
	}
	refused()
	code, out := runCLI(t, "doctor", "--dir", dir)
	if code != exitHoles || !strings.Contains(out, "chain_restarted") || !strings.Contains(out, "doctor: holes found") ||
		strings.Contains(out, "doctor: healthy") || !strings.Contains(out, "hole 5 is recorded by no record of the log") {
		t.Fatalf("doctor: exit %d, want %d:\n%s", code, exitHoles, out)
	}
	code, out = runCLI(t, "doctor", "--dir", dir, "--json")
	if code != exitHoles || !strings.Contains(out, `"healthy":false`) || !strings.Contains(out, `"holes":true`) {
		t.Fatalf("doctor --json: exit %d:\n%s", code, out)
	}

	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{HeartbeatInterval: -1, Operation: "f4-test"}, itemDef)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	refused()
	code, out = runCLI(t, "audit", "verify", "--dir", dir, "--accept-salvage-holes")
	m = chainHeadLine.FindStringSubmatch(out)
	if code != exitOK || m == nil {
		t.Fatalf("holes accepted: exit %d:\n%s", code, out)
	}
	code, out = runCLI(t, "audit", "verify", "--dir", dir, "--accept-salvage-holes", "--pin", m[1]+":"+m[2])
	if code != exitOK || !strings.Contains(out, "the log extends the pinned head") {
		t.Fatalf("a head pinned after the hole was recorded: exit %d:\n%s", code, out)
	}
	code, out = runCLI(t, "doctor", "--dir", dir)
	if code != exitHoles || !regexp.MustCompile(`hole 5 recorded at seq \d+`).MatchString(out) {
		t.Fatalf("doctor after the hole was recorded: exit %d:\n%s", code, out)
	}
}
