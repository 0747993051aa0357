package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// serve logs a tab that became blocked (WARN, its reason) and one that
// recovered (INFO), once each, with tab names and codes only.
func TestServeLogsATabBlockedAndUnblockedOnce(t *testing.T) {
	var buf bytes.Buffer
	w := newTabWatch(slog.New(slog.NewJSONHandler(&buf, nil)))
	tabs := func(state hikoutei.SyncState, reason hikoutei.SyncReason) *hikoutei.SyncHealth {
		return &hikoutei.SyncHealth{Tabs: []hikoutei.TabHealth{{Tab: "Item_System", State: state, Reason: reason},
			{Tab: "Item_Input", State: hikoutei.SyncOK}}}
	}
	blocked := tabs(hikoutei.SyncBlocked, "sheet_header_drift")
	for _, h := range []*hikoutei.SyncHealth{tabs(hikoutei.SyncOK, ""), blocked, blocked, nil, tabs(hikoutei.SyncBehind, ""),
		tabs(hikoutei.SyncOK, "")} {
		w.step(h)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"level":"WARN","msg":"sync: tab blocked","tab":"Item_System","reason":"sheet_header_drift"`) ||
		!strings.Contains(lines[1], `"level":"INFO","msg":"sync recovered: tab unblocked","tab":"Item_System","was":"sheet_header_drift","state":"behind"`) {
		t.Fatalf("lines:\n%s", buf.String())
	}
}
