package storagefault

import (
	"context"
	"errors"
	"fmt"
	"sort"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/doctor"
)

// Probe is what opening, reading and checking a store after a fault
// showed.
type Probe struct {
	// Reported lists every way damage was reported: typed errors from
	// Open or reads, Health, doctor's failed findings.
	Reported []string `json:"reported,omitempty"`
	// Missing are acknowledged ids the store did not return; Wrong are
	// ids it returned with another value (or that nobody wrote).
	Missing []string `json:"missing,omitempty"`
	Wrong   []string `json:"wrong,omitempty"`
	// Appeared are ids of refused units the store returned.
	Appeared []string `json:"appeared,omitempty"`
}

// Damaged reports whether the store returned anything but what was
// acknowledged.
func (p Probe) Damaged() bool { return len(p.Missing)+len(p.Wrong)+len(p.Appeared) > 0 }

// probe opens the store at dir (the opens-th open of the run), reads
// every note and compares them with l, then runs doctor on the closed
// store. Errors only for what is not the store's answer.
func probe(dir string, opens int, l *ledger) Probe {
	var p Probe
	s, err := hikoutei.Open(context.Background(), dir, storeOptions(opens), NoteDef)
	if err != nil {
		p.Reported = append(p.Reported, "open: "+codeText(err))
		p.Missing = sortedKeys(l.acked)
	} else {
		p.read(s, l)
		if err := s.Close(); err != nil {
			p.Reported = append(p.Reported, "close: "+codeText(err))
		}
	}
	for _, f := range doctor.Check(dir).Findings {
		if f.Severity == doctor.Fail {
			p.Reported = append(p.Reported, "doctor: "+f.Check)
		}
	}
	return p
}

// read compares every note the store holds with the ledger.
func (p *Probe) read(s *hikoutei.Store, l *ledger) {
	if h := s.Health(); h.Integrity != nil || h.Local != nil {
		p.Reported = append(p.Reported, "health: "+codeText(errors.Join(h.Integrity, h.Local)))
	}
	all, err := hikoutei.Find[Note](context.Background(), s)
	if err != nil {
		p.Reported = append(p.Reported, "find: "+codeText(err))
	}
	seen := map[string]bool{}
	for _, n := range all {
		seen[n.ID] = true
		want, ok := l.acked[n.ID]
		switch {
		case ok && want == n.Text, l.uncertain[n.ID]:
		case ok || !isRefused(l, n.ID):
			p.Wrong = append(p.Wrong, n.ID)
		default:
			p.Appeared = append(p.Appeared, n.ID)
		}
	}
	for _, id := range sortedKeys(l.acked) {
		if !seen[id] {
			p.Missing = append(p.Missing, id)
		}
	}
}

func isRefused(l *ledger, id string) bool {
	for _, r := range l.refused {
		if r == id {
			return true
		}
	}
	return false
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// codeText is an error's text up to its first colon: its stable code,
// never a payload.
func codeText(err error) string {
	s := err.Error()
	for i, r := range s {
		if r == ':' {
			return s[:i]
		}
	}
	return fmt.Sprintf("%.60s", s)
}
