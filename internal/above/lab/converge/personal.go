package converge

import (
	"context"
	"fmt"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/above/lab/plaintext"
	"github.com/hikoutei/hikoutei-go/internal/keyring"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// personalLedger is the workload's record of personal values (each
// distinct and recognisable) and of the subjects it erased.
type personalLedger struct {
	values map[string]string // value → its subject
	erased map[string]bool   // subjects whose Erase returned
	n      int
}

// piiPrefix starts every personal value of the workload.
const piiPrefix = "pii-"

// newValue is a fresh personal value for subject id.
func (l *personalLedger) newValue(id string, run int) string {
	l.n++
	v := fmt.Sprintf("%s%s-%d.%d@mail.example", piiPrefix, id, run, l.n)
	l.values[v] = id
	return v
}

// erase erases subject id (Store.Erase) and records it once Erase returned.
func (w *workload) erase(ctx context.Context, s *hikoutei.Store, id string) error {
	if w.pii.erased[id] {
		return nil
	}
	if _, err := s.Erase(ctx, id); err != nil {
		return fmt.Errorf("erase: %w", err)
	}
	w.pii.erased[id] = true
	return nil
}

// wantEmail is what a live part's Email must read: the marker once its
// subject was erased, else the value last acknowledged.
func (w *workload) wantEmail(id string) string {
	if w.pii.erased[id] {
		return hikoutei.Erased
	}
	return w.live[id].Email
}

// personalDiffs compares the store's typed reads of Email with the
// ledger: one line per difference.
func (w *workload) personalDiffs(parts []*Part) []string {
	var out []string
	for _, p := range parts {
		if _, ok := w.live[p.ID]; ok && p.Email != w.wantEmail(p.ID) {
			out = append(out, fmt.Sprintf("part %s reads an email that is not %s", p.ID, w.describe(p.ID)))
		}
	}
	return out
}

// describe names what a subject's personal cell must hold, without the
// value itself.
func (w *workload) describe(id string) string {
	if w.pii.erased[id] {
		return "the erased marker"
	}
	return "its last acknowledged value"
}

// sheetDiffs compares the System tab's email cells (rows as displayed)
// with the ledger, and searches every tab given for an erased subject's
// value: one line per difference.
func (w *workload) sheetDiffs(tabs map[string][][]string) []string {
	var out []string
	rows := tabs[systemTab]
	if len(rows) == 0 {
		return []string{systemTab + " shows nothing"}
	}
	a, e := indexOf(rows[0], layout.AnchorHeader), indexOf(rows[0], "email")
	if a < 0 || e < 0 {
		return []string{systemTab + " has no anchor or email column"}
	}
	seen := map[string]bool{}
	for _, row := range rows[1:] {
		if a >= len(row) || w.live[row[a]].ID == "" {
			continue
		}
		seen[row[a]] = true
		if cell(row, e) != w.wantEmail(row[a]) {
			out = append(out, fmt.Sprintf("%s row of part %s shows an email that is not %s", systemTab, row[a], w.describe(row[a])))
		}
	}
	for id := range w.live {
		if !seen[id] {
			out = append(out, fmt.Sprintf("%s shows no row of part %s", systemTab, id))
		}
	}
	return append(out, w.erasedOnSheet(tabs)...)
}

func cell(row []string, c int) string {
	if c < len(row) {
		return row[c]
	}
	return ""
}

// erasedOnSheet names each tab cell holding a value of an erased subject.
func (w *workload) erasedOnSheet(tabs map[string][][]string) []string {
	var out []string
	for tab, rows := range tabs {
		for _, row := range rows {
			for _, c := range row {
				if subject, ok := w.pii.values[c]; ok && w.pii.erased[subject] {
					out = append(out, fmt.Sprintf("%s shows a value of erased subject %s", tab, subject))
				}
			}
		}
	}
	return out
}

// checkSheetPersonal reads the run's tabs as the person sees them and
// counts each personal difference (after quiescence: canonical state).
func (r *runner) checkSheetPersonal() {
	tabs := map[string][][]string{}
	for _, tab := range []string{systemTab, inputTab, layout.ConflictsTab, layout.ReceiptsTab} {
		if rows, err := r.person().p.Displayed(tab); err == nil {
			tabs[tab] = rows
		}
	}
	for _, d := range r.work.sheetDiffs(tabs) {
		r.c.problem(&r.c.res.PersonalMismatches, r.run, "%s", d)
	}
}

// scanPlaintext searches every file of the closed store's directory but
// the key file (zstd segments also decompressed) for the workload's
// personal values: the store keeps only sealed text, so a value found is
// a finding, an erased subject's a breach of I37. It returns one line per
// file holding any.
func scanPlaintext(dir string, l *personalLedger) ([]string, error) {
	hits, err := plaintext.Scan(dir, keyring.File, plaintext.Ledger{Prefix: piiPrefix, Values: l.values})
	var out []string
	for _, h := range hits {
		out = append(out, fmt.Sprintf("%s holds a plaintext personal value (%s)", h.File, l.whose(append(h.Subjects, h.Decompressed...))))
	}
	return out, err
}

// whose names one of subjects, an erased one first.
func (l *personalLedger) whose(subjects []string) string {
	for _, s := range subjects {
		if l.erased[s] {
			return "of erased subject " + s
		}
	}
	return "of live subject " + subjects[0]
}

// checkPlaintext scans the closed store's directory (scanPlaintext) and
// counts each file holding a personal value.
func (r *runner) checkPlaintext() error {
	files, err := scanPlaintext(r.dir, &r.work.pii)
	if err != nil {
		return fmt.Errorf("plaintext search: %w", err)
	}
	for _, f := range files {
		r.c.problem(&r.c.res.PlaintextFiles, r.run, "%s", f)
	}
	r.c.res.Erased += len(r.work.pii.erased)
	r.c.res.PersonalValues += len(r.work.pii.values)
	return nil
}
