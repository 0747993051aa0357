package engine

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// PreviewAdoption is a dry run of Adopt on the store dir without opening
// it for writing (hikoutei adopt --dry-run): the entity's shape comes
// from its log, opened read-only (store_locked while a process holds it),
// the state of the tab's keys from its read model, opened read-only, and
// the tab from the spreadsheet through client. Nothing is written: no
// record, no lease, no cell. Errors: as Adopt's planning; ErrNotAStore;
// a read model that is missing (open the store once, or replay).
func PreviewAdoption(ctx context.Context, dir string, client sheetsio.Client, spreadsheetID string, req AdoptRequest) (AdoptReport, error) {
	ad, ok := client.(sheetsio.TabAdopter)
	if !ok {
		return AdoptReport{}, fmt.Errorf("%w: the sync provider cannot read a tab", ErrAdoptNeedsSync)
	}
	reg, err := declaredReadOnly(dir)
	if err != nil {
		return AdoptReport{}, err
	}
	shape, err := declaredShape(reg, req.Entity)
	if err != nil {
		return AdoptReport{}, err
	}
	schema, err := layoutOf(reg, nil)
	if err != nil {
		return AdoptReport{}, err
	}
	conn, done, err := OpenReadModelReadOnly(dir)
	if err != nil {
		return AdoptReport{}, err
	}
	defer done()
	states := func(entity string, keys []string) (map[string]aggregates.EntityState, error) {
		return projector.EntityStatesOn(conn, entity, keys)
	}
	req.DryRun = true
	a, err := planAdoption(ctx, adoptSource{adopter: ad, spreadsheet: spreadsheetID, shape: shape, reserved: schema.TabNames(), states: states}, req)
	return a.reportOrZero(err)
}

// declaredReadOnly reads the entity declarations of dir's log, opened
// read-only.
func declaredReadOnly(dir string) (*Registry, error) {
	if err := IsStore(dir); err != nil {
		return nil, err
	}
	l, err := events.OpenLog(filepath.Join(dir, events.LogFileName), events.Options{ReadOnly: true})
	if err != nil {
		return nil, events.DescribeLocked(dir, err)
	}
	defer l.Close()
	return Declared(l)
}
