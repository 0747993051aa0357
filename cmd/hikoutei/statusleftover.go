package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"zombiezen.com/go/sqlite"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/projector"
)

// leftoverJSON is a file an interrupted command left in the store
// directory (status's "leftovers").
type leftoverJSON struct {
	File  string `json:"file"`
	Bytes int64  `json:"bytes"`
	Code  string `json:"code"`
	Hint  string `json:"hint"`
}

// leftoverHints say, by reason code, what left a file and what becomes
// of it.
var leftoverHints = map[string]string{
	engine.ReasonRebuildInterrupted: "a rebuild of the read model (replay --dir, or the end of a restore) was killed; " +
		"the read model it was replacing is as it was. The next open of the store or replay --dir removes it",
	engine.ReasonCompactInterrupted: "a compact was killed before it renamed its copy; log.db is intact. " +
		"The next open of the store or compact removes it",
}

// readLeftovers lists the files interrupted commands left in dir, when no
// process has its log open (else a running replay, restore or compact may
// still be writing them, and a running store removed them at its open).
func readLeftovers(dir string) []leftoverJSON {
	if idle, known := events.LogIdle(dir); !idle || !known {
		return nil
	}
	var out []leftoverJSON
	for _, l := range engine.Leftovers(dir) {
		out = append(out, leftoverJSON{File: l.Name, Bytes: l.Bytes, Code: l.Code, Hint: leftoverHints[l.Code]})
	}
	return out
}

// readAdoptions lists the adoptions interrupted in dir (their process no
// longer runs: killed, or stopped with the machine), each with what it
// left and the commands that finish or discard it.
func readAdoptions(dir string) []leftoverJSON {
	var out []leftoverJSON
	for _, m := range engine.InterruptedAdoptions(dir) {
		hint := fmt.Sprintf("an adoption of the tab %s into %s (started %s) stopped after %d of the %d rows it was to create "+
			"(%d units): those are records; the rest are not quarantined and the tab is not renamed. To finish it, run the same "+
			"`hikoutei adopt --dir %s --tab %s --entity %s …` again (rows adopted already record nothing); "+
			"to leave it as it is, remove the mark: `rm %s`",
			strconv.Quote(m.Tab), m.Entity, m.Started.Format(time.RFC3339), m.Created, m.Creates, m.Units,
			shellWord(dir), shellWord(m.Tab), shellWord(m.Entity), shellWord(filepath.Join(dir, m.File)))
		if m.Tab == "" {
			hint = fmt.Sprintf("an adoption stopped, and its mark cannot be read: remove it (`rm %s`) and adopt the tab again",
				shellWord(filepath.Join(dir, m.File)))
		}
		out = append(out, leftoverJSON{File: m.File, Bytes: fileSize(filepath.Join(dir, m.File)), Code: engine.ReasonAdoptInterrupted, Hint: hint})
	}
	return out
}

// fileSize is the size of the file at path (0 when it cannot be read).
func fileSize(path string) int64 {
	st, err := os.Lstat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// readModelMissing marks st when dir has a log but no read model (a
// restore killed before it built it, the file removed, or a symbolic
// link in its place to a file that is gone), with the command that
// builds it; it reports whether it is missing.
func readModelMissing(dir string, st *storeStatus) bool {
	if _, err := os.Stat(filepath.Join(dir, hikoutei.ReadModelFile)); !os.IsNotExist(err) {
		return false
	}
	st.ReadModelCode, st.SyncHealth, st.Unwritable = engine.ReasonReadModelMissing, []syncHealthJSON{}, []unwritableValue{}
	st.NextStep = fmt.Sprintf("hikoutei replay --dir %s", shellWord(dir))
	return true
}

// readModelDamaged reports whether err, reading the read model, says it
// cannot be read as one: read_model_invalid (not a file, no database, no
// read model, a malformed value), or SQLite finding its pages damaged
// after the first reads went well.
func readModelDamaged(err error) bool {
	switch sqlite.ErrCode(err).ToPrimary() {
	case sqlite.ResultCorrupt, sqlite.ResultNotADB:
		return true
	}
	return errors.Is(err, projector.ErrReadModelInvalid)
}

// readModelInvalid marks st as having a read model that cannot be read
// (err, readModelDamaged), with the command that rebuilds it from the
// log; what the read model would have told is absent, the lease is the
// log's.
func (st *storeStatus) readModelInvalid(dir string, err error) {
	st.ReadModelCode, st.ReadModelDetail = projector.ErrReadModelInvalid.Error(), err.Error()
	if !errors.Is(err, projector.ErrReadModelInvalid) {
		st.ReadModelDetail = fmt.Sprintf("%s: %s cannot be read: %s", projector.ErrReadModelInvalid,
			filepath.Join(dir, hikoutei.ReadModelFile), sqlite.ErrCode(err).ToPrimary().Message())
	}
	st.NextStep = fmt.Sprintf("hikoutei replay --dir %s", shellWord(dir))
	st.SyncHealth, st.Unwritable = []syncHealthJSON{}, []unwritableValue{}
	st.leaseFromLog(dir)
}

// readModelFailure is errProblemsFound when status found a read model it
// cannot read (status then exits 1, after its report); nil otherwise.
func (st *storeStatus) readModelFailure() error {
	if st.ReadModelCode == projector.ErrReadModelInvalid.Error() {
		return errProblemsFound
	}
	return nil
}

// leaseFromLog sets st's lease from dir's log when no read model tells it
// and no process holds the log (else it stays unknown: epoch 0).
func (st *storeStatus) leaseFromLog(dir string) {
	l, err := events.OpenLog(filepath.Join(dir, events.LogFileName), events.Options{ReadOnly: true, OpenTimeout: logPeekTimeout})
	if err != nil {
		return
	}
	defer l.Close()
	if lease, ok, err := l.Lease(events.DefaultRole); err == nil && ok {
		st.LeaseEpoch, st.LeaseState = int64(lease.Epoch), string(lease.State)
	}
}

// printLeftovers prints the read model's absence or damage and the
// leftovers, each with its code and what to do.
func printLeftovers(tw io.Writer, st storeStatus) {
	switch st.ReadModelCode {
	case engine.ReasonReadModelMissing:
		fmt.Fprintf(tw, "READ MODEL MISSING\t%s: no %s (a restore killed before it built it, the file removed, or a link to a file that is gone): run `%s` "+
			"(opening the store builds it too)\n", st.ReadModelCode, hikoutei.ReadModelFile, shown(st.NextStep))
	case projector.ErrReadModelInvalid.Error():
		fmt.Fprintf(tw, "READ MODEL INVALID\t%s; %s\n", quoteControls(st.ReadModelDetail), quoteControls(rebuildAdvice(st.Dir)))
	}
	for _, l := range st.Leftovers {
		fmt.Fprintf(tw, "LEFTOVER\t%s (%d bytes): %s: %s\n", shown(l.File), l.Bytes, l.Code, quoteControls(l.Hint))
	}
}
