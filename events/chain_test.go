package events

import (
	"context"
	"encoding/binary"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
	bolt "go.etcd.io/bbolt"
)

// editLog runs fn on the events and meta buckets of the closed log at path.
func editLog(t *testing.T, path string, fn func(ev, meta *bolt.Bucket)) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	must(t, err)
	defer db.Close()
	must(t, db.Update(func(tx *bolt.Tx) error {
		fn(tx.Bucket(bucketEvents), tx.Bucket(bucketMeta))
		return nil
	}))
}

// reencoded is stored record rec with its header changed by fn and its
// checksum recomputed: what someone who edits a record can produce.
func reencoded(t *testing.T, rec []byte, fn func(h *header)) []byte {
	t.Helper()
	r, err := parseRaw(0, rec)
	must(t, err)
	fn(&r.h)
	return encodeHeader(&r.h, r.payload)
}

// verifyPath opens the log at path read-only and verifies its chain.
func verifyPath(t *testing.T, path string, pin *ChainPin) (*ChainReport, error) {
	t.Helper()
	return verifyPathOpts(t, path, ChainVerifyOptions{Pin: pin})
}

// verifyPathOpts opens the log at path read-only and verifies its chain
// with opts.
func verifyPathOpts(t *testing.T, path string, opts ChainVerifyOptions) (*ChainReport, error) {
	t.Helper()
	l, err := OpenLog(path, Options{ReadOnly: true})
	must(t, err)
	defer l.Close()
	return l.VerifyChain(context.Background(), opts)
}

// acceptHoles verifies the log at path accepting salvage holes.
func acceptHoles(t *testing.T, path string) (*ChainReport, error) {
	t.Helper()
	return verifyPathOpts(t, path, ChainVerifyOptions{AcceptSalvageHoles: true})
}

// wantRestartedAt fails unless err is a *ChainRestartedError naming the
// first hole lost and the restart at.
func wantRestartedAt(t *testing.T, err error, lost string, at uint64) {
	t.Helper()
	var re *ChainRestartedError
	if !errors.As(err, &re) || !errors.Is(err, ErrChainRestarted) || re.Lost.String() != lost || re.At != at {
		t.Fatalf("want the chain restarted at seq %d after %s, got %v", at, lost, err)
	}
}

// wantBrokenAt fails unless err is a *ChainBrokenError at seq.
func wantBrokenAt(t *testing.T, err error, seq uint64) {
	t.Helper()
	var be *ChainBrokenError
	if !errors.As(err, &be) || !errors.Is(err, ErrChainBroken) || be.Seq != seq {
		t.Fatalf("want the chain broken at seq %d, got %v", seq, err)
	}
}

func TestI33_AnUntouchedLogVerifiesToTheHeadItReports(t *testing.T) {
	path := buildLog(t, t.TempDir(), 1000)
	rep, err := verifyPath(t, path, nil)
	must(t, err)
	l, err := OpenLog(path, Options{ReadOnly: true})
	must(t, err)
	defer l.Close()
	head, err := l.ChainHead()
	must(t, err)
	if rep.Head != head.Seq || rep.HeadHash != head.Hash || rep.Records != head.Seq || rep.FirstChained != 1 {
		t.Fatalf("verified %+v, the log's head is %v", rep, head)
	}
	if rep.Genesis != Genesis(l.StoreID()) || rep.Genesis == Genesis(l.StoreID()+"x") {
		t.Fatal("the genesis value is not derived from the store id")
	}
}

func TestI33_AFlippedByteIsFoundAtItsSequence(t *testing.T) {
	path := buildLog(t, t.TempDir(), 300)
	editLog(t, path, func(ev, _ *bolt.Bucket) {
		rec := append([]byte(nil), ev.Get(u64(120))...)
		rec[len(rec)/2] ^= 0x01
		must(t, ev.Put(u64(120), rec))
	})
	_, err := verifyPath(t, path, nil)
	wantBrokenAt(t, err, 120)
}

func TestI33_AnEditWithItsChecksumRecomputedIsFoundAtItsSequence(t *testing.T) {
	path := buildLog(t, t.TempDir(), 300)
	editLog(t, path, func(ev, _ *bolt.Bucket) {
		rec := append([]byte(nil), ev.Get(u64(120))...)
		body := rec[:len(rec)-checksumLen]
		body[len(body)-2] ^= 0x01 // inside the payload
		binary.LittleEndian.PutUint64(rec[len(body):], xxhash.Sum64(body))
		must(t, ev.Put(u64(120), rec))
	})
	if _, err := DecodeRecord(120, mustGet(t, path, 120)); err != nil && !errors.As(err, new(*PayloadError)) {
		t.Fatalf("the edited record should pass its own checksum: %v", err)
	}
	_, err := verifyPath(t, path, nil)
	wantBrokenAt(t, err, 120)
}

func TestI33_ARemovedRecordIsFoundAtItsSequence(t *testing.T) {
	t.Run("deleted", func(t *testing.T) {
		path := buildLog(t, t.TempDir(), 300)
		editLog(t, path, func(ev, _ *bolt.Bucket) { must(t, ev.Delete(u64(77))) })
		_, err := verifyPath(t, path, nil)
		wantBrokenAt(t, err, 77)
	})
	t.Run("renumbered", func(t *testing.T) {
		path := buildLog(t, t.TempDir(), 300)
		editLog(t, path, func(ev, meta *bolt.Bucket) {
			head := getU64(meta, metaHead)
			for seq := uint64(78); seq <= head; seq++ {
				must(t, ev.Put(u64(seq-1), reencoded(t, ev.Get(u64(seq)), func(h *header) { h.Seq-- })))
			}
			must(t, ev.Delete(u64(head)))
			must(t, meta.Put(metaHead, u64(head-1)))
		})
		_, err := verifyPath(t, path, nil)
		wantBrokenAt(t, err, 77)
	})
}

func TestI33_TwoSwappedRecordsAreFoundAtTheFirst(t *testing.T) {
	t.Run("values swapped", func(t *testing.T) {
		path := buildLog(t, t.TempDir(), 300)
		editLog(t, path, func(ev, _ *bolt.Bucket) {
			a, b := append([]byte(nil), ev.Get(u64(50))...), append([]byte(nil), ev.Get(u64(51))...)
			must(t, ev.Put(u64(50), b))
			must(t, ev.Put(u64(51), a))
		})
		_, err := verifyPath(t, path, nil)
		wantBrokenAt(t, err, 50)
	})
	t.Run("renumbered and checksummed", func(t *testing.T) {
		path := buildLog(t, t.TempDir(), 300)
		editLog(t, path, func(ev, _ *bolt.Bucket) {
			a := reencoded(t, ev.Get(u64(50)), func(h *header) { h.Seq = 51 })
			b := reencoded(t, ev.Get(u64(51)), func(h *header) { h.Seq = 50 })
			must(t, ev.Put(u64(50), b))
			must(t, ev.Put(u64(51), a))
		})
		_, err := verifyPath(t, path, nil)
		wantBrokenAt(t, err, 50)
	})
}

func TestI33_APinnedHeadVerifiesAfterMoreCommitsAndFailsAfterARewrite(t *testing.T) {
	dir := t.TempDir()
	path := buildLog(t, dir, 200)
	rep, err := verifyPath(t, path, nil)
	must(t, err)
	pin := ChainPin{Seq: rep.Head, Hash: rep.HeadHash}
	w, err := OpenWriter(dir, WriterOptions{Log: Options{Clock: NewManualClock(t0)}, AcquireWait: -1, HeartbeatInterval: -1})
	must(t, err)
	_, err = w.Append(unit("entity/Part/1", AnyVersion, 40))
	must(t, err)
	must(t, w.Close())
	later, err := verifyPath(t, path, &pin)
	if err != nil || !later.Pinned || later.Head <= pin.Seq {
		t.Fatalf("the pin %v after more commits: %+v, %v", pin, later, err)
	}
	// Rewrite history consistently: edit a record and re-link every
	// record after it, so the chain itself holds together again.
	editLog(t, path, func(ev, _ *bolt.Bucket) {
		w := newChainWalker(rep.StoreID, nil, false)
		for seq := uint64(1); ev.Get(u64(seq)) != nil; seq++ {
			r, err := parseRaw(seq, ev.Get(u64(seq)))
			must(t, err)
			if seq == 100 {
				r.h.At = r.h.At.Add(1)
			}
			r.h.Link = w.c
			rec := encodeHeader(&r.h, r.payload)
			must(t, ev.Put(u64(seq), rec))
			nr, err := parseRaw(seq, rec)
			must(t, err)
			w.c = nr.chainValue(w.c)
		}
	})
	if _, err := verifyPath(t, path, nil); err != nil {
		t.Fatalf("the consistent rewrite should hold together: %v", err)
	}
	_, err = verifyPath(t, path, &pin)
	var pe *ChainPinError
	if !errors.As(err, &pe) || !errors.Is(err, ErrChainPinMismatch) || pe.Pin != pin {
		t.Fatalf("a rewritten log against the pin: %v", err)
	}
	past := ChainPin{Seq: later.Head + 5, Hash: later.HeadHash}
	if _, err := verifyPath(t, path, &past); !errors.Is(err, ErrChainPinMismatch) {
		t.Fatalf("a pin past the log's end: %v", err)
	}
}

// unchain rewrites every record of the closed log at path in its
// pre-chain form (format 1 or 2) and marks the log format 2: a log an
// older build wrote.
func unchain(t *testing.T, path string) {
	editLog(t, path, func(ev, meta *bolt.Bucket) {
		must(t, ev.ForEach(func(k, v []byte) error {
			return ev.Put(k, reencoded(t, v, func(h *header) { h.Link = ChainHash{} }))
		}))
		must(t, meta.Put(metaFormat, []byte("2")))
	})
}

func TestI33_AnUpgradedFormat2LogChainsOverItsOlderRecordsAndVerifies(t *testing.T) {
	dir := t.TempDir()
	path := buildLog(t, dir, 150)
	unchain(t, path)
	old, err := verifyPath(t, path, nil)
	must(t, err)
	if old.FirstChained != 0 || old.Records != old.Head {
		t.Fatalf("a format-2 log: %+v", old)
	}
	pin := ChainPin{Seq: old.Head, Hash: old.HeadHash}
	w, err := OpenWriter(dir, WriterOptions{Log: Options{Clock: NewManualClock(t0)}, AcquireWait: -1, HeartbeatInterval: -1})
	must(t, err)
	_, err = w.Append(unit("entity/Part/1", AnyVersion, 3))
	must(t, err)
	must(t, w.Close())
	if f := formatOf(t, path); f != strconv.Itoa(LogFormat) {
		t.Fatalf("format %q after the upgrade", f)
	}
	rep, err := verifyPath(t, path, &pin)
	must(t, err)
	if rep.FirstChained != old.Head+1 || !rep.Pinned {
		t.Fatalf("after the upgrade: %+v (the old head was %d)", rep, old.Head)
	}
	// A record from before the upgrade is covered by the first chained
	// record's link.
	editLog(t, path, func(ev, _ *bolt.Bucket) {
		must(t, ev.Put(u64(10), reencoded(t, ev.Get(u64(10)), func(h *header) { h.Epoch++ })))
	})
	_, err = verifyPath(t, path, nil)
	wantBrokenAt(t, err, old.Head+1)
}

func TestI33_ASalvagedHoleRestartsTheChainAndAppendsGoOn(t *testing.T) {
	dir := t.TempDir()
	path := buildLog(t, dir, 150)
	editLog(t, path, func(ev, meta *bolt.Bucket) {
		must(t, ev.Delete(u64(60)))
		must(t, ev.Delete(u64(61)))
		must(t, meta.Put(metaSalvageLost, []byte("60-61")))
	})
	w, err := OpenWriter(dir, WriterOptions{Log: Options{Clock: NewManualClock(t0)}, AcquireWait: -1, HeartbeatInterval: -1})
	must(t, err)
	_, err = w.Append(unit("entity/Part/1", AnyVersion, 2))
	must(t, err)
	must(t, w.Close())
	rep, err := verifyPath(t, path, nil)
	wantRestartedAt(t, err, "60-61", 62)
	if rep == nil || rep.Head != 156 || rep.Records != 154 || len(rep.Restarts) != 1 {
		t.Fatalf("the refused walk's report %+v", rep)
	}
	rep, err = acceptHoles(t, path)
	must(t, err)
	if len(rep.Restarts) != 1 || rep.Restarts[0].At != 62 || rep.Restarts[0].Lost.String() != "60-61" {
		t.Fatalf("restarts %+v", rep.Restarts)
	}
}

// The forgery a salvage hole would otherwise hide: a record removed, the
// meta's salvage_lost set to its sequence, the next record edited and
// every later link recomputed. Verification refuses it by default; with
// holes accepted only a head pinned after the forgery point finds it.
func TestI33_AForgedSalvageHoleIsNotVerifiedSilently(t *testing.T) {
	path := buildLog(t, t.TempDir(), 150) // head 152
	pinBefore, err := verifyPath(t, path, nil)
	must(t, err)
	pin := ChainPin{Seq: pinBefore.Head, Hash: pinBefore.HeadHash}
	orig := recordBytes(t, path)
	editLog(t, path, func(ev, meta *bolt.Bucket) {
		must(t, ev.Delete(u64(60)))
		must(t, meta.Put(metaSalvageLost, []byte("60")))
		r, err := parseRaw(61, orig[61])
		must(t, err)
		c := r.h.Link
		for seq := uint64(61); seq <= pinBefore.Head; seq++ {
			rec := reencoded(t, orig[seq], func(h *header) {
				h.Link = c
				if seq == 61 {
					h.At = h.At.Add(1)
				}
			})
			must(t, ev.Put(u64(seq), rec))
			nr, err := parseRaw(seq, rec)
			must(t, err)
			c = nr.chainValue(c)
		}
	})
	rep, err := verifyPath(t, path, nil)
	wantRestartedAt(t, err, "60", 61)
	if rep.Head != pinBefore.Head || rep.Records != pinBefore.Head-1 {
		t.Fatalf("the refused walk's report %+v", rep)
	}
	if _, err := acceptHoles(t, path); err != nil {
		t.Fatalf("holes accepted: %v", err)
	}
	if _, err := verifyPathOpts(t, path, ChainVerifyOptions{Pin: &pin, AcceptSalvageHoles: true}); !errors.Is(err, ErrChainPinMismatch) {
		t.Fatalf("a head pinned after the forged hole: %v", err)
	}
}

func TestI33_AStandbyHoldsThePrimarysChain(t *testing.T) {
	r := &memReplica{}
	open := func(repl Replicator) *Log {
		l, err := OpenLog(filepath.Join(t.TempDir(), LogFileName), Options{Clock: NewManualClock(t0), Replicator: repl, StoreID: "replicated"})
		must(t, err)
		t.Cleanup(func() { l.Close() })
		return l
	}
	primary := open(r)
	f := acquire(t, primary, "w1").Fence()
	for i := range 3 {
		_, err := primary.Append(f, unit("entity/Part/1", uint64(2*i), 2))
		must(t, err)
	}
	standby := open(nil)
	must(t, r.Follow(standby))
	p, err := primary.ChainHead()
	must(t, err)
	s, err := standby.VerifyChain(context.Background(), ChainVerifyOptions{Pin: &p})
	if err != nil || s.HeadHash != p.Hash {
		t.Fatalf("the standby's chain %+v, the primary's head %v: %v", s, p, err)
	}
}

func TestReplicaFormKeepsTheStoredBytesButTheToken(t *testing.T) {
	l, _ := openTestLog(t)
	f := acquire(t, l, "w1").Fence()
	_, err := l.Append(f, unit("entity/Part/1", 0, 1))
	must(t, err)
	var recs [][]byte
	must(t, l.ReadRecords(1, func(_ uint64, rec []byte) error { recs = append(recs, rec); return nil }))
	for i, rec := range recs {
		rf, err := ReplicaForm(rec)
		must(t, err)
		e, err := DecodeRecord(uint64(i+1), rf)
		must(t, err)
		stored, _ := DecodeRecord(uint64(i+1), rec)
		if e.Token != "" || stored.Token == "" || e.Link != stored.Link {
			t.Fatalf("seq %d: replica token %q link %v, stored token %q link %v", i+1, e.Token, e.Link, stored.Token, stored.Link)
		}
		a, _, _ := RecordChainValue(rf)
		b, _, _ := RecordChainValue(rec)
		if a != b {
			t.Fatalf("seq %d: the replica form's chain value differs", i+1)
		}
	}
}

func mustGet(t *testing.T, path string, seq uint64) []byte {
	t.Helper()
	var out []byte
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	must(t, err)
	defer db.Close()
	must(t, db.View(func(tx *bolt.Tx) error { out = append(out, tx.Bucket(bucketEvents).Get(u64(seq))...); return nil }))
	return out
}

// A salvage keeps every record byte for byte: an intact log's salvage
// has the same head hash; one that lost records verifies, reporting each
// hole, with the chain values of the original records after them; and a
// writer appends after a lost last record.
func TestI33_ASalvagedLogKeepsItsChain(t *testing.T) {
	src := buildLog(t, t.TempDir(), 300) // head 302
	want, err := verifyPath(t, src, nil)
	must(t, err)
	_, dst, err := salvageTo(t, src, SalvageOptions{})
	must(t, err)
	got, err := verifyPath(t, dst, nil)
	if err != nil || got.HeadHash != want.HeadHash || len(got.Restarts) != 0 {
		t.Fatalf("salvage of an intact log: %+v (%v), the source's head %v", got, err, want.HeadHash)
	}
	orig := recordBytes(t, src)
	w := newChainWalker(want.StoreID, nil, false)
	for seq := uint64(1); seq <= 301; seq++ {
		r, err := parseRaw(seq, orig[seq])
		must(t, err)
		w.c = r.chainValue(w.c)
	}
	destroyRecords(t, src, 150, 151, 302)
	rep, dst2, err := salvageTo(t, src, SalvageOptions{})
	must(t, err)
	_, err = verifyPath(t, dst2, nil)
	wantRestartedAt(t, err, "150-151", 152)
	got, err = acceptHoles(t, dst2)
	if err != nil || rep.Lost.String() != "150-151, 302" || len(got.Restarts) != 1 || got.Restarts[0].At != 152 || got.Head != 301 || got.HeadHash != w.c {
		t.Fatalf("salvage that lost %v: %+v (%v)", rep.Lost, got, err)
	}
	wr, err := OpenWriter(filepath.Dir(dst2), WriterOptions{Log: Options{Clock: NewManualClock(t0)}, Operation: "test", AcquireWait: -1, HeartbeatInterval: -1})
	must(t, err)
	must(t, wr.Close())
	_, err = verifyPath(t, dst2, nil)
	var re *ChainRestartedError
	if !errors.As(err, &re) || re.Holes != 2 || re.At != 152 {
		t.Fatalf("appended after a lost last record, holes not accepted: %v", err)
	}
	got, err = acceptHoles(t, dst2)
	if err != nil || len(got.Restarts) != 2 || got.Restarts[1].At != 303 || got.Head != 304 {
		t.Fatalf("appended after a lost last record: %+v (%v)", got, err)
	}
}

// F4: a pin taken before a salvage hole never vouches for the log after
// it. The red team's forgery needs no re-linking: delete one record and
// name it in salvage_lost; the next record's link still commits to the
// deleted one and the walk restarts from it, so the chain values after
// the hole are the old ones and an old pin used to match. A pin from
// before the hole fails chain_pin_mismatch naming the hole, holes accepted
// or not: one pinned before the hole, and one pinned after it but before
// an integrity.holes_recorded record names it (the store appends one when
// it next opens). A head pinned from that record on vouches.
func TestF4_APinTakenBeforeASalvageHoleNeverVouchesAfterIt(t *testing.T) {
	dir := t.TempDir()
	path := buildLog(t, dir, 150) // head 152
	before, err := verifyPath(t, path, nil)
	must(t, err)
	mid, err := verifyPathOpts(t, path, ChainVerifyOptions{Pin: &ChainPin{Seq: before.Head, Hash: before.HeadHash}})
	must(t, err)
	pins := []ChainPin{{Seq: mid.Head, Hash: mid.HeadHash}, {Seq: 0, Hash: before.Genesis}}
	editLog(t, path, func(ev, meta *bolt.Bucket) {
		must(t, ev.Delete(u64(100)))
		must(t, meta.Put(metaSalvageLost, []byte("100")))
	})
	refused := func(pin ChainPin) {
		t.Helper()
		for _, accept := range []bool{true, false} {
			_, err := verifyPathOpts(t, path, ChainVerifyOptions{Pin: &pin, AcceptSalvageHoles: accept})
			var pe *ChainPinError
			if !errors.As(err, &pe) || pe.Hole.String() != "100" || !strings.Contains(err.Error(), "predates salvage hole 100") {
				t.Fatalf("pin %d, holes accepted %v: %v", pin.Seq, accept, err)
			}
		}
	}
	for _, pin := range pins {
		refused(pin)
	}
	// The store records the hole when it next opens; a head pinned from
	// that record on vouches for the log after the hole, an older one
	// still does not.
	w, err := OpenWriter(dir, WriterOptions{Log: Options{Clock: NewManualClock(t0)}, AcquireWait: -1, HeartbeatInterval: -1})
	must(t, err)
	holes, err := w.Log().UnrecordedHoles()
	must(t, err)
	if holes.String() != "100" {
		t.Fatalf("unrecorded holes %q", holes)
	}
	_, err = w.Append(Unit{Streams: []StreamAppend{{Stream: IntegrityStream, ExpectedVersion: AnyVersion,
		Events: []Event{{Payload: HolesRecorded{Lost: holes.String()}}}}}})
	must(t, err)
	holes, err = w.Log().UnrecordedHoles()
	must(t, err)
	must(t, w.Close())
	if len(holes) != 0 {
		t.Fatalf("still unrecorded: %q", holes)
	}
	for _, pin := range pins {
		refused(pin)
	}
	after, err := acceptHoles(t, path)
	must(t, err)
	if len(after.Restarts) != 1 || after.Restarts[0].Recorded == 0 {
		t.Fatalf("restarts %+v", after.Restarts)
	}
	pin := ChainPin{Seq: after.Head, Hash: after.HeadHash}
	if rep, err := verifyPathOpts(t, path, ChainVerifyOptions{Pin: &pin, AcceptSalvageHoles: true}); err != nil || !rep.Pinned {
		t.Fatalf("a pin after the hole was recorded: %+v %v", rep, err)
	}
	if _, err := verifyPathOpts(t, path, ChainVerifyOptions{Pin: &pin}); !errors.Is(err, ErrChainRestarted) {
		t.Fatalf("holes not accepted: %v", err)
	}
}

// F8 (events side): MarkLost raises the head past sequences an earlier
// history handed out; they are recorded lost and the next append follows
// them, so no seq ever names two records.
func TestF8_MarkLostContinuesNumberingPastTheLostSequences(t *testing.T) {
	dir := t.TempDir()
	path := buildLog(t, dir, 10) // head 12
	w, err := OpenWriter(dir, WriterOptions{Log: Options{Clock: NewManualClock(t0)}, AcquireWait: -1, HeartbeatInterval: -1,
		BeforeLease: func(l *Log) error { return l.MarkLost(20) }})
	must(t, err)
	res, err := w.Append(unit("entity/Part/x", AnyVersion, 1))
	must(t, err)
	lost, err := w.Log().Holes()
	must(t, err)
	must(t, w.Close())
	// lease.acquired took 21 (after the lost 13-20), the unit 22.
	if res[0].First != 22 || lost.String() != "13-20" {
		t.Fatalf("first %d, lost %q", res[0].First, lost)
	}
	rep, err := acceptHoles(t, path)
	must(t, err)
	if len(rep.Restarts) != 1 || rep.Restarts[0].Lost.String() != "13-20" || rep.Restarts[0].At != 21 {
		t.Fatalf("restarts %+v", rep.Restarts)
	}
}
