package doctor

import (
	"context"
	"errors"
	"fmt"

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
	rep, err := l.VerifyChain(context.Background(), events.ChainVerifyOptions{})
	var restarted *events.ChainRestartedError
	switch {
	case errors.As(err, &restarted):
		r.Findings = append(r.Findings, Finding{Check: chainCheck, Severity: Warn, Code: events.ErrChainRestarted.Error(),
			Detail: fmt.Sprintf("%v (`hikoutei audit verify` fails unless --accept-salvage-holes); links hold up to the head %d", err, rep.Head)})
	case err != nil:
		r.fail(chainCheck, err, "%v", err)
	case rep.Records == 0:
		r.add(chainCheck, OK, "empty log")
	default:
		r.add(chainCheck, OK, "%d records linked from the store's genesis value to the head %d:%s", rep.Records, rep.Head, rep.HeadHash)
	}
}
