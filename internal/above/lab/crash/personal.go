package crash

import (
	"context"
	"fmt"
	"maps"
	"sync"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/above/lab/plaintext"
	"github.com/hikoutei/hikoutei-go/internal/keyring"
)

// personalLedger is what the children said about personal values (PII
// lines, printed before the commit that carries the value) and erasures
// (ERASED lines, printed after Erase returned), and which subjects the
// checks have seen erased.
type personalLedger struct {
	mu     sync.Mutex
	values map[string]string // value → its subject
	acked  map[string]bool   // subjects whose Erase returned
	erased map[string]bool   // subjects acked or read as erased (I37: for good)
}

func newPersonalLedger() *personalLedger {
	return &personalLedger{values: map[string]string{}, acked: map[string]bool{}, erased: map[string]bool{}}
}

func (p *personalLedger) value(subject, v string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.values[v] = subject
}

func (p *personalLedger) erasedAck(subject string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.acked[subject] = true
	p.erased[subject] = true
}

// counts are the subjects erased (acknowledged or finished by an Open
// after a kill), those acknowledged, and the personal values written.
func (p *personalLedger) counts() (erased, acked, values int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.erased), len(p.acked), len(p.values)
}

// checkPersonal checks what the open store s reads (I37 across kills):
// every subject whose Erase returned, and every subject read as erased at
// an earlier check, reads the marker for good; every other live Item
// reads a value the workload wrote for that subject.
func (k *checker) checkPersonal(ctx context.Context, s *hikoutei.Store, run int) error {
	items, err := hikoutei.Find[Item](ctx, s)
	if err != nil {
		return err
	}
	p := k.personal
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, it := range items {
		switch {
		case it.Email == hikoutei.Erased:
			p.erased[it.ID] = true
		case p.erased[it.ID]:
			k.c.problem(&k.c.res.Mismatches, "run %d: I37: erased subject %s reads a personal value, not the marker", run, it.ID)
		case p.values[it.Email] != it.ID:
			k.c.problem(&k.c.res.Mismatches, "run %d: %s reads a personal value the workload never wrote for it", run, it.ID)
		}
	}
	return nil
}

// scanPlaintext searches every byte of every file of the store directory
// and of the campaign's bucket when it has one (segments also
// decompressed), except the key file, for the workload's personal values:
// the store holds only sealed text, so any value found is a finding, an
// erased subject's a breach of I37.
func (k *checker) scanPlaintext(run int) error {
	l, erased := k.personal.snapshot()
	for _, root := range []string{k.dir, k.bucket} {
		if root == "" {
			continue
		}
		hits, err := plaintext.Scan(root, keyring.File, l)
		if err != nil {
			return err
		}
		for _, h := range hits {
			file := h.File
			if root == k.bucket {
				file = "bucket/" + h.File
			}
			k.reportPlaintext(run, file, h.Subjects, erased)
			k.reportPlaintext(run, file+" (decompressed)", h.Decompressed, erased)
		}
	}
	return nil
}

// snapshot is the ledger's values to search for and its erased subjects.
func (p *personalLedger) snapshot() (plaintext.Ledger, map[string]bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return plaintext.Ledger{Prefix: piiPrefix, Values: maps.Clone(p.values)}, maps.Clone(p.erased)
}

// reportPlaintext reports each subject whose personal value file holds.
func (k *checker) reportPlaintext(run int, file string, subjects []string, erased map[string]bool) {
	for _, subject := range subjects {
		if erased[subject] {
			k.c.problem(&k.c.res.Mismatches, "run %d: I37: %s holds a plaintext personal value of erased subject %s", run, file, subject)
		} else {
			k.c.problem(&k.c.res.Mismatches, "run %d: %s holds a plaintext personal value of %s (the store keeps only sealed text)", run, file, subject)
		}
	}
}

// personalNote is the campaign's line about personal values.
func (k *checker) personalNote() string {
	erased, acked, values := k.personal.counts()
	return fmt.Sprintf("personal values written %d, subjects erased %d (acknowledged %d)", values, erased, acked)
}
