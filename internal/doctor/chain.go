package doctor

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hikoutei/hikoutei-go/events"
)

// chainCheck is the name of the hash chain's findings.
const chainCheck = "hash chain"

// checkChain walks the log's hash chain (events.Log.VerifyChain) once the
// checksums and sequences hold: a broken link fails as chain_broken
// naming the sequence (damage: doctor exits 3); a chain that restarts
// after a salvage's hole is a chain_restarted warning, as the salvage
// itself is: the store works, but no link vouches for the records after
// the hole, which `hikoutei audit verify` refuses unless holes are
// accepted.
func checkChain(r *Report, l *events.Log, v *events.Verification) {
	if len(v.Problems) > 0 || len(v.Corrupt) > 0 || len(v.Missing) > 0 || v.MoreProblems > 0 {
		r.add(chainCheck, Warn, "not walked: the log's damage above comes first")
		return
	}
	r.step(Progress{Step: "walking the hash chain"})
	rep, err := l.VerifyChain(context.Background(), events.ChainVerifyOptions{Progress: func(done, total uint64) {
		r.step(Progress{Step: "walking the hash chain", Done: done, Total: total})
	}})
	var restarted *events.ChainRestartedError
	switch {
	case errors.As(err, &restarted):
		r.Findings = append(r.Findings, Finding{Check: chainCheck, Severity: Warn, Code: events.ErrChainRestarted.Error(),
			Detail: fmt.Sprintf("%v (`hikoutei audit verify` fails unless --accept-salvage-holes); links hold up to the head %d; %s",
				err, rep.Head, holesRecorded(rep.Restarts))})
	case err != nil:
		r.fail(chainCheck, err, "%v", err)
	case rep.Records == 0:
		r.add(chainCheck, OK, "empty log")
	default:
		r.add(chainCheck, OK, "%d records linked from the store's genesis value to the head %d:%s", rep.Records, rep.Head, rep.HeadHash)
		strays(r, rep.Stray)
	}
}

// strays warns of the files of the segment location no seal of this log
// vouches for (readers ignore them): a seal that did not commit, or
// another store's segments in a location two stores share.
func strays(r *Report, names []string) {
	if len(names) == 0 {
		return
	}
	shown := names[:min(len(names), 3)]
	more := ""
	if len(names) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(names)-len(shown))
	}
	r.add(chainCheck, Warn, "%d stray segment file(s) no seal of this store vouches for (ignored: a seal that did not commit, "+
		"or another store's in a shared location): %s%s", len(names), strings.Join(shown, ", "), more)
}

// holesRecorded says where the store recorded each hole in its log
// (integrity.holes_recorded): a head pinned from there on may vouch
// across it; a pin taken before never does.
func holesRecorded(rs []events.ChainRestart) string {
	var parts []string
	for _, h := range rs {
		if h.Recorded == 0 {
			parts = append(parts, fmt.Sprintf("hole %s is recorded by no record of the log (a pin vouches across it only once the store, "+
				"opened, records it)", h.Lost))
			continue
		}
		parts = append(parts, fmt.Sprintf("hole %s recorded at seq %d (pins from there on vouch across it; older pins never do)", h.Lost, h.Recorded))
	}
	return strings.Join(parts, "; ")
}
