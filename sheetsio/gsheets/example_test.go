package gsheets_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// The effects dispatcher's view: provision once, then hand in per-tab row
// operations; each op comes back with its own status.
func ExampleProvider_Dispatch() {
	srv := httptest.NewServer(emulator.New(emulator.Options{AutoCreate: true}).Handler())
	defer srv.Close()
	ctx := context.Background()
	p, err := gsheets.New(ctx, gsheets.Config{Endpoint: srv.URL})
	if err != nil {
		fmt.Println(err)
		return
	}
	schema, _ := layout.NewSchema(layout.Entity{Name: "Part", Fields: []layout.Field{
		{Name: "sku", Kind: cell.String, Key: true},
		{Name: "qty", Kind: cell.Int, Editable: true},
		{Name: "seen", Kind: cell.Time},
	}})
	wb, err := p.Provision(ctx, "1ExampleSpreadsheetId00", schema)
	if err != nil {
		fmt.Println(err)
		return
	}

	vals := map[string]any{"sku": "00123", "qty": int64(5), "seen": time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)}
	fence := &sheetsio.Fence{StoreID: "store-1", Epoch: 1, Token: "tok-1"}
	res, err := p.Dispatch(ctx, wb, sheetsio.Batch{Fence: fence, Ops: []sheetsio.Op{{
		ID: "effect-1", Tab: "Part_System", Kind: sheetsio.OpAppend, Anchor: "row-00123", Values: vals,
		Receipt: &sheetsio.Receipt{EffectID: "effect-1", PayloadHash: "p1"},
	}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Ops[0].Status, res.Reads, "reads", res.Writes, "write")

	spec, _ := schema.Tab("Part_System")
	expected, _ := sheetsio.ExpectedRowHash(spec, "row-00123", vals)
	res, err = p.Dispatch(ctx, wb, sheetsio.Batch{Fence: fence, Ops: []sheetsio.Op{{
		ID: "effect-2", Tab: "Part_System", Kind: sheetsio.OpUpdate, Anchor: "row-00123",
		Values: map[string]any{"qty": int64(6)}, ExpectedHash: expected,
	}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Ops[0].Status)
	// Output:
	// applied 1 reads 1 write
	// applied
}
