package gsheets

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/api/googleapi"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// accessProvider is a Provider configured with a service-account file and
// pointed at the emulator (the HTTP client carries the requests, so no
// token is fetched from Google).
func accessProvider(t *testing.T, emu *emulator.Emulator, email string, logs *syncBuffer) *Provider {
	t.Helper()
	srv := httptest.NewServer(emu.Handler())
	t.Cleanup(srv.Close)
	p, err := New(context.Background(), Config{
		Endpoint:        srv.URL,
		CredentialsFile: serviceAccountFile(t, email),
		HTTPClient:      srv.Client(),
		Logger:          slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Pacing:          Pacing{ReadInterval: -1, WriteInterval: -1},
		Backoff:         Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond, Attempts: 3},
		Sleep:           func(ctx context.Context, _ time.Duration) error { return ctx.Err() },
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCheckMapsEmulator403ToPermissionDenied(t *testing.T) {
	const email = "hikoutei-sync@example-project.iam.gserviceaccount.com"
	emu := emulator.New(emulator.Options{})
	if err := emu.CreateSpreadsheet(testSheetID, "Shared book"); err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	p := accessProvider(t, emu, email, logs)
	if err := p.Check(context.Background(), testSheetID); err != nil {
		t.Fatalf("shared spreadsheet: %v", err)
	}
	emu.Deny(testSheetID)
	emu.ResetCounters()
	err := p.Check(context.Background(), testSheetID)
	var e *sheetsio.Error
	if !errors.Is(err, sheetsio.ErrPermissionDenied) || !errors.As(err, &e) || e.Code != "sheet_permission_denied" || !strings.Contains(e.Msg, email) {
		t.Fatalf("denied: %v", err)
	}
	var gerr *googleapi.Error
	if !errors.As(err, &gerr) || gerr.Code != 403 || gerr.Message != "The caller does not have permission" ||
		!strings.Contains(string(gerr.Body), `"status":"PERMISSION_DENIED"`) {
		t.Fatalf("cause = %#v", gerr)
	}
	if c := emu.Counters(testSheetID); c.Reads != 1 {
		t.Fatalf("a 403 must not be retried: %d reads", c.Reads)
	}
	// Provision and Dispatch report the same diagnostic before writing anything.
	_, err = p.Provision(context.Background(), testSheetID, testSchema(t))
	if !errors.Is(err, sheetsio.ErrPermissionDenied) || !strings.Contains(err.Error(), email) {
		t.Fatalf("provision: %v", err)
	}
	_, err = p.Dispatch(context.Background(), sheetsio.OpenWorkbook(testSheetID, testSchema(t), nil),
		sheetsio.Batch{Ops: []sheetsio.Op{appendOp("Part_System", "r1", partValues("1", 1))}})
	if !errors.Is(err, sheetsio.ErrPermissionDenied) {
		t.Fatalf("dispatch: %v", err)
	}
	if c := emu.Counters(testSheetID); c.Writes != 0 {
		t.Fatalf("denied spreadsheet saw %d writes", c.Writes)
	}
	if strings.Contains(err.Error(), testSheetID) || strings.Contains(logs.String(), testSheetID) {
		t.Fatalf("spreadsheet id leaked: %v\n%s", err, logs.String())
	}
	emu.Allow(testSheetID)
	if err := p.Check(context.Background(), testSheetID); err != nil {
		t.Fatalf("after Allow: %v", err)
	}
}

func TestDenyWinsOverAutoCreate(t *testing.T) {
	emu := emulator.New(emulator.Options{AutoCreate: true})
	emu.Deny(testSheetID)
	p := accessProvider(t, emu, "sa@example.iam.gserviceaccount.com", &syncBuffer{})
	if err := p.Check(context.Background(), testSheetID); !errors.Is(err, sheetsio.ErrPermissionDenied) {
		t.Fatalf("denied + auto-create: %v", err)
	}
	if ids := emu.SpreadsheetIDs(); len(ids) != 0 {
		t.Fatalf("a denied request created %v", ids)
	}
}

func TestCheckMapsUnknownSpreadsheetToNotFound(t *testing.T) {
	emu := emulator.New(emulator.Options{}) // AutoCreate off
	p := accessProvider(t, emu, "sa@example.iam.gserviceaccount.com", &syncBuffer{})
	err := p.Check(context.Background(), testSheetID)
	if !errors.Is(err, sheetsio.ErrSpreadsheetNotFound) {
		t.Fatalf("unknown spreadsheet: %v", err)
	}
	if c := emu.Counters(testSheetID); c.Reads != 1 {
		t.Fatalf("a 404 must not be retried: %d reads", c.Reads)
	}
	if strings.Contains(err.Error(), testSheetID) {
		t.Fatalf("spreadsheet id leaked: %v", err)
	}
	_, err = p.Provision(context.Background(), testSheetID, testSchema(t))
	if !errors.Is(err, sheetsio.ErrSpreadsheetNotFound) {
		t.Fatalf("provision: %v", err)
	}
	if ids := emu.SpreadsheetIDs(); len(ids) != 0 {
		t.Fatalf("404 path created %v", ids)
	}
}
