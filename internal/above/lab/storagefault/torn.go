package storagefault

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
)

// sector is the unit a torn write tears at.
const sector = 512

// tornUnits is how many acknowledged units a torn_write run commits
// before the one a power cut interrupts.
const tornUnits = 20

// storeFiles are the files a power cut is simulated on.
type storeFiles struct{ log, db, wal []byte }

func readStoreFiles(dir string) (storeFiles, error) {
	var f storeFiles
	var err error
	for _, x := range []struct {
		name string
		dst  *[]byte
	}{{events.LogFileName, &f.log}, {hikoutei.ReadModelFile, &f.db}, {hikoutei.ReadModelFile + "-wal", &f.wal}} {
		data, rerr := os.ReadFile(filepath.Join(dir, x.name))
		if rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
		*x.dst = data
	}
	return f, err
}

// runTornWrite commits tornUnits units, copies the store's files, commits
// one more unit, and builds the files a power cut during that commit
// could leave; the store opened on them must hold every acknowledged unit
// and the interrupted one entirely or not at all.
func runTornWrite(spec RunSpec) (RunResult, error) {
	live := filepath.Join(spec.Dir, "live")
	before, after, w, err := interruptedCommit(live, spec.Seed)
	if err != nil {
		return RunResult{}, err
	}
	rng := rand.New(rand.NewPCG(spec.Seed, 0x7042))
	log, complete, detail := tearLog(before.log, after.log, rng)
	wal, walDetail := tearWAL(before.wal, after.wal, complete, rng)
	torn := filepath.Join(spec.Dir, "torn")
	if err := writeStore(torn, storeFiles{log: log, db: before.db, wal: wal}); err != nil {
		return RunResult{}, err
	}
	res := RunResult{Kind: spec.Kind, Detail: detail + "; " + walDetail, Acked: len(w.l.acked)}
	res.Probe = probe(torn, 2, w.l)
	return res, nil
}

// interruptedCommit returns the store's files before and after the last
// of tornUnits+1 units, and the workload with that unit's notes marked
// uncertain (a power cut came before its acknowledgement). Nothing else
// writes between the copies (no heartbeat, no automatic snapshot), so
// their difference is that one commit's writes.
func interruptedCommit(dir string, seed uint64) (before, after storeFiles, w *workload, err error) {
	opts := storeOptions(0)
	opts.SnapshotEvery = 0 // exactly one log transaction between the two copies
	s, err := hikoutei.Open(context.Background(), dir, opts, NoteDef)
	if err != nil {
		return before, after, nil, err
	}
	defer func() { err = errors.Join(err, s.Close()) }()
	w = newWorkload(seed)
	for range tornUnits {
		if err := w.unit(s); err != nil {
			return before, after, w, err
		}
	}
	if before, err = readStoreFiles(dir); err != nil {
		return before, after, w, err
	}
	first := w.next
	if err := w.unit(s); err != nil {
		return before, after, w, err
	}
	for i := first; i < w.next; i++ {
		id := fmt.Sprintf("n%05d", i)
		delete(w.l.acked, id)
		w.l.uncertain[id] = true
	}
	after, err = readStoreFiles(dir)
	return before, after, w, err
}

// tearLog returns the log file a power cut during the commit that turned
// before into after could leave: each changed data page written or not,
// one written page torn at a sector, and the new meta page (written by
// bbolt only after the data pages were synced) present, torn or absent
// only when every data page is whole. complete reports the new meta page
// whole (the commit made it).
func tearLog(before, after []byte, rng *rand.Rand) (out []byte, complete bool, detail string) {
	pageSize := int(binary.LittleEndian.Uint32(after[24:]))
	out = make([]byte, len(after))
	copy(out, before)
	var meta, data []int
	for off := 0; off < len(after); off += pageSize {
		end := min(off+pageSize, len(after))
		if off < len(before) && bytes.Equal(before[off:min(end, len(before))], after[off:end]) && end <= len(before) {
			continue
		}
		if off < 2*pageSize {
			meta = append(meta, off)
		} else {
			data = append(data, off)
		}
	}
	written, torn := 0, -1
	for _, off := range data {
		if rng.IntN(4) == 0 {
			continue // never reached the disk
		}
		copy(out[off:off+pageSize], after[off:off+pageSize])
		written++
		if torn < 0 && rng.IntN(3) == 0 {
			torn = off
			cut := sector * (1 + rng.IntN(pageSize/sector-1))
			copy(out[off+cut:off+pageSize], zeroOr(before, off+cut, off+pageSize))
		}
	}
	detail = fmt.Sprintf("log: %d of %d data pages written", written, len(data))
	if written < len(data) || torn >= 0 || len(meta) == 0 {
		return out, false, detail + ", meta not written"
	}
	return tearMeta(out, after, meta[0], pageSize, rng, detail)
}

// tearMeta writes the new meta page at off whole, torn or not at all.
func tearMeta(out, after []byte, off, pageSize int, rng *rand.Rand, detail string) ([]byte, bool, string) {
	switch rng.IntN(3) {
	case 0:
		return out, false, detail + ", meta not written"
	case 1: // the meta (page header and fields, 80 bytes) torn after its first 64: its txid and checksum never made it
		copy(out[off:off+64], after[off:off+64])
		return out, false, detail + ", meta torn"
	}
	copy(out[off:off+pageSize], after[off:off+pageSize])
	return out, true, detail + ", meta written"
}

// zeroOr returns before[from:to], or zeros where before is shorter.
func zeroOr(before []byte, from, to int) []byte {
	out := make([]byte, to-from)
	if from < len(before) {
		copy(out, before[from:min(to, len(before))])
	}
	return out
}

// tearWAL returns the read model's WAL as the power cut left it: the
// frames already there plus a prefix of the new ones — never the new
// transaction's last (commit) frame unless the log commit was complete
// (the projection commits only after the log's fsync).
func tearWAL(before, after []byte, logComplete bool, rng *rand.Rand) ([]byte, string) {
	if len(before) < 32 || len(after) < len(before) || !bytes.Equal(before[:32], after[:32]) {
		return before, "wal: restarted meanwhile, left as before"
	}
	fresh := after[len(before):]
	limit := len(fresh)
	if !logComplete {
		frame := 24 + int(binary.BigEndian.Uint32(after[8:]))
		limit = max(0, limit-frame)
	}
	cut := rng.IntN(limit + 1)
	return append(append([]byte(nil), before...), fresh[:cut]...), fmt.Sprintf("wal: %d of %d new bytes", cut, len(fresh))
}

// writeStore writes files as a store directory at dir.
func writeStore(dir string, f storeFiles) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for name, data := range map[string][]byte{events.LogFileName: f.log, hikoutei.ReadModelFile: f.db, hikoutei.ReadModelFile + "-wal": f.wal} {
		if data == nil {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return err
		}
	}
	return nil
}
