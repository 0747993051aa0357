package events

import (
	"context"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// verifyAndRecord walks the whole chain of the closed log at path (from
// its checkpoint when fromCheckpoint) and records the checkpoint at its
// end, as a store's open does.
func verifyAndRecord(t *testing.T, path string, fromCheckpoint bool) (*ChainReport, bool) {
	t.Helper()
	l, err := OpenLog(path, Options{})
	must(t, err)
	defer l.Close()
	rep, err := l.VerifyChain(context.Background(), ChainVerifyOptions{AcceptSalvageHoles: true, FromCheckpoint: fromCheckpoint})
	must(t, err)
	recorded, err := l.RecordChainCheckpoint(rep)
	must(t, err)
	return rep, recorded
}

// fromCheckpoint verifies the closed log at path from its checkpoint,
// read-only.
func fromCheckpoint(t *testing.T, path string) (*ChainReport, error) {
	t.Helper()
	return verifyPathOpts(t, path, ChainVerifyOptions{FromCheckpoint: true})
}

// appendMore appends n records to the closed store in dir.
func appendMore(t *testing.T, dir string, n int) {
	t.Helper()
	w, err := OpenWriter(dir, WriterOptions{Log: Options{Clock: NewManualClock(t0)}, AcquireWait: -1, HeartbeatInterval: -1})
	must(t, err)
	_, err = w.Append(unit("entity/Part/1", AnyVersion, n))
	must(t, err)
	must(t, w.Close())
}

// storedCheckpoint is the checkpoint in the meta bucket of the closed log
// at path.
func storedCheckpoint(t *testing.T, path string) ChainCheckpoint {
	t.Helper()
	var p ChainCheckpoint
	editLog(t, path, func(_, meta *bolt.Bucket) {
		var err error
		p, err = decodeChainCheckpoint(meta.Get(metaChainVerified))
		must(t, err)
	})
	return p
}

func TestChainCheckpointAWalkFromItReadsOnlyWhatWasAppendedSince(t *testing.T) {
	dir := t.TempDir()
	path := buildLog(t, dir, 300)
	whole, recorded := verifyAndRecord(t, path, false)
	if !recorded || whole.From != 0 {
		t.Fatalf("a whole walk of a log without a checkpoint: recorded %v, %+v", recorded, whole)
	}
	if p := storedCheckpoint(t, path); p.Seq != whole.Head || p.Hash != whole.HeadHash || p.From != 0 || p.Records != whole.Records {
		t.Fatalf("checkpoint %+v after a walk to %d:%s", p, whole.Head, whole.HeadHash)
	}
	appendMore(t, dir, 25)
	since, err := fromCheckpoint(t, path)
	must(t, err)
	all, err := verifyPath(t, path, nil)
	must(t, err)
	appended := all.Head - whole.Head
	if since.From != whole.Head || since.Records != appended || since.Head != all.Head || since.HeadHash != all.HeadHash {
		t.Fatalf("from the checkpoint at %d: %+v; the whole walk: %+v", whole.Head, since, all)
	}
}

func TestChainCheckpointIsUsedOnlyWhenTheLogVouchesForIt(t *testing.T) {
	cases := map[string]struct {
		edit   func(t *testing.T, p ChainCheckpoint, ev, meta *bolt.Bucket)
		reason string
	}{
		"its hash changed": {func(t *testing.T, p ChainCheckpoint, _, meta *bolt.Bucket) {
			p.Hash[0] ^= 1
			must(t, meta.Put(metaChainVerified, p.encode()))
		}, "not the checkpoint's hash"},
		"moved to another record": {func(t *testing.T, p ChainCheckpoint, _, meta *bolt.Bucket) {
			p.Seq -= 10
			must(t, meta.Put(metaChainVerified, p.encode()))
		}, "not the checkpoint's hash"},
		"past the head (an older log.db)": {func(t *testing.T, p ChainCheckpoint, _, meta *bolt.Bucket) {
			p.Seq += 10
			must(t, meta.Put(metaChainVerified, p.encode()))
		}, "past the log's head"},
		"its record torn": {func(t *testing.T, p ChainCheckpoint, ev, _ *bolt.Bucket) {
			rec := append([]byte(nil), ev.Get(u64(p.Seq))...)
			rec[len(rec)/2] ^= 1
			must(t, ev.Put(u64(p.Seq), rec))
		}, "damaged"},
		"not a checkpoint": {func(t *testing.T, _ ChainCheckpoint, _, meta *bolt.Bucket) {
			must(t, meta.Put(metaChainVerified, []byte("x")))
		}, "not a checkpoint"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := buildLog(t, dir, 200)
			verifyAndRecord(t, path, false)
			p := storedCheckpoint(t, path)
			editLog(t, path, func(ev, meta *bolt.Bucket) { c.edit(t, p, ev, meta) })
			rep, _ := fromCheckpoint(t, path)
			if rep.From != 0 || rep.Records == 0 || !strings.Contains(rep.Distrusted, c.reason) {
				t.Fatalf("a walk from a checkpoint the log does not vouch for started from %d, walked %d, distrust %q (want %q)",
					rep.From, rep.Records, rep.Distrusted, c.reason)
			}
		})
	}
}

// A record changed below the checkpoint is not read by a walk from it
// (what a store's open does), and is found at its sequence by a walk from
// the genesis value (what audit verify and doctor do).
func TestI33_ARecordChangedBelowTheChainCheckpointIsFoundByAWholeWalk(t *testing.T) {
	path := buildLog(t, t.TempDir(), 300)
	verifyAndRecord(t, path, false)
	editLog(t, path, func(ev, _ *bolt.Bucket) {
		must(t, ev.Put(u64(120), reencoded(t, ev.Get(u64(120)), func(h *header) { h.Epoch++ })))
	})
	if rep, err := fromCheckpoint(t, path); err != nil || rep.From == 0 || rep.Records != 0 {
		t.Fatalf("the walk from the checkpoint: %+v, %v", rep, err)
	}
	_, err := verifyPath(t, path, nil)
	wantBrokenAt(t, err, 120)
}

// A log an earlier build wrote has no checkpoint, and records written
// before the chain carry no link to check one against: it is walked whole
// until a walk ends at a chained record, which it then records.
func TestChainCheckpointALogOfAnEarlierBuildIsWalkedWholeThenRecorded(t *testing.T) {
	dir := t.TempDir()
	path := buildLog(t, dir, 150)
	unchain(t, path)
	old, recorded := verifyAndRecord(t, path, true)
	if recorded || old.From != 0 || old.Records != old.Head || old.Distrusted != "" {
		t.Fatalf("a pre-chain log: recorded %v, %+v", recorded, old)
	}
	appendMore(t, dir, 5)
	whole, recorded := verifyAndRecord(t, path, true)
	if !recorded || whole.From != 0 || whole.Records != whole.Head {
		t.Fatalf("after the upgrade: recorded %v, %+v", recorded, whole)
	}
	again, recorded := verifyAndRecord(t, path, true)
	if recorded || again.From != whole.Head || again.Records != 0 || again.HeadHash != whole.HeadHash {
		t.Fatalf("the next walk: recorded %v, %+v", recorded, again)
	}
}
