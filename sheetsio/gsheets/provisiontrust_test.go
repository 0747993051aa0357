package gsheets

import (
	"context"
	"testing"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

func schemaTabNames(w *sheetsio.Workbook) []string {
	var out []string
	for _, t := range w.Schema().Tabs() {
		out = append(out, t.Name)
	}
	return out
}

func TestProvisioningTrustsTheTabsItCreatedForTheTrustTTL(t *testing.T) {
	clk := &movingClock{now: fixedNow}
	h := newHarness(t, emulator.Options{AutoCreate: true}, func(c *Config) { c.Now = clk.Now })
	w := h.provision(testSchema(t))
	tabs := schemaTabNames(w)
	titles, ok := trustOf(w).trusted(tabs, nil, clk.Now(), DefaultTrustTTL)
	if !ok || titles["Part_System"] != "Part_System" {
		t.Fatalf("created tabs not trusted: %v %v", titles, ok)
	}
	// The fence is not vouched for: an authority is verified only by a
	// dispatch's read or a blind write's response.
	if _, ok := trustOf(w).trusted(tabs, &sheetsio.Fence{StoreID: "s", Epoch: 1, Token: "t"}, clk.Now(), DefaultTrustTTL); ok {
		t.Fatal("provisioning vouched for a fence it never read")
	}
	clk.advance(DefaultTrustTTL)
	if _, ok := trustOf(w).trusted(tabs, nil, clk.Now(), DefaultTrustTTL); ok {
		t.Fatal("trust outlived its TTL")
	}
}

func TestReprovisioningTrustsValidatedHeadersAndForgetsADriftedTab(t *testing.T) {
	clk := &movingClock{now: fixedNow}
	h := newHarness(t, emulator.Options{AutoCreate: true}, func(c *Config) { c.Now = clk.Now })
	w := h.provision(testSchema(t))
	if err := h.emu.Person(testSheetID).Type("Part_System", "B1", "renamed"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.p.Reprovision(context.Background(), w); err == nil {
		t.Fatal("drifted header not reported")
	}
	if _, ok := trustOf(w).trusted([]string{"Part_System"}, nil, clk.Now(), DefaultTrustTTL); ok {
		t.Fatal("a drifted tab stayed trusted")
	}
	if _, ok := trustOf(w).trusted([]string{"Part_Input", layout.ReceiptsTab}, nil, clk.Now(), DefaultTrustTTL); !ok {
		t.Fatal("validated tabs not trusted")
	}
}

func TestProvisionedTrustForgetsAnEmptyTabWhoseHeaderWasJustWritten(t *testing.T) {
	got := provisionedTrust(map[string]*sheetsio.TabSnapshot{
		"A": {Tab: "A", Title: "A"},
		"B": {Tab: "B", Title: "B", Empty: true},
	}, []string{"C"})
	if got["A"].Title != "A" || got["B"].Title != "" || got["C"].Title != "C" {
		t.Fatalf("trust = A:%q B:%q C:%q", got["A"].Title, got["B"].Title, got["C"].Title)
	}
}
