package emulator

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	sheets "google.golang.org/api/sheets/v4"
)

// newClient starts the emulator behind httptest and returns the real
// sheets/v4 client pointed at it.
func newClient(t testing.TB, emu *Emulator) *sheets.Service {
	t.Helper()
	srv := httptest.NewServer(emu.Handler())
	t.Cleanup(srv.Close)
	svc, err := sheets.NewService(context.Background(), option.WithEndpoint(srv.URL), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func newBookClient(t *testing.T, opts Options) (*Emulator, *sheets.Service, string) {
	t.Helper()
	emu := New(opts)
	const id = "book-1"
	if err := emu.CreateSpreadsheet(id, "Test book"); err != nil {
		t.Fatal(err)
	}
	return emu, newClient(t, emu), id
}

func apiCode(t *testing.T, err error) int {
	t.Helper()
	var gerr *googleapi.Error
	if !errors.As(err, &gerr) {
		t.Fatalf("want *googleapi.Error, got %T %v", err, err)
	}
	return gerr.Code
}

func rows(v ...[]any) [][]any { return v }

func TestValuesRawVersusUserEntered(t *testing.T) {
	_, svc, id := newBookClient(t, Options{})
	vr := &sheets.ValueRange{Values: rows([]any{"00123", "=1+1", "2020-01-01", "+1 555 0100", "TRUE", "'0050", 42.5})}
	if _, err := svc.Spreadsheets.Values.Update(id, "Sheet1!A1", vr).ValueInputOption("RAW").Do(); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Spreadsheets.Values.Update(id, "Sheet1!A2", vr).ValueInputOption("USER_ENTERED").Do(); err != nil {
		t.Fatal(err)
	}
	got, err := svc.Spreadsheets.Values.Get(id, "Sheet1!A1:G2").ValueRenderOption("UNFORMATTED_VALUE").Do()
	if err != nil {
		t.Fatal(err)
	}
	wantRaw := []any{"00123", "=1+1", "2020-01-01", "+1 555 0100", "TRUE", "'0050", 42.5}
	wantUser := []any{123.0, 2.0, 43831.0, "+1 555 0100", true, "0050", 42.5}
	assertRow(t, got.Values[0], wantRaw)
	assertRow(t, got.Values[1], wantUser)
	formula, _ := svc.Spreadsheets.Values.Get(id, "Sheet1!B2").ValueRenderOption("FORMULA").Do()
	if formula.Values[0][0] != "=1+1" {
		t.Fatalf("FORMULA render = %v", formula.Values)
	}
	shown, _ := svc.Spreadsheets.Values.Get(id, "Sheet1!C2").ValueRenderOption("UNFORMATTED_VALUE").DateTimeRenderOption("FORMATTED_STRING").Do()
	if shown.Values[0][0] != "2020-01-01" {
		t.Fatalf("FORMATTED_STRING date = %v", shown.Values)
	}
}

func assertRow(t *testing.T, got, want []any) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("row %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("cell %d = %#v, want %#v (row %v)", i, got[i], want[i], got)
		}
	}
}

func TestEmulatorC04_TrailingEmptiesTrimmedAndEmptyTabHasNoValues(t *testing.T) {
	_, svc, id := newBookClient(t, Options{})
	vr := &sheets.ValueRange{Values: rows(
		[]any{"id", "name", "email", "notes"},
		[]any{"7", "Bolt", "", ""},
		[]any{"", "", "", ""},
		[]any{"8", "Nut", "", "n"},
	)}
	if _, err := svc.Spreadsheets.Values.Update(id, "Sheet1!A1:D4", vr).ValueInputOption("RAW").Do(); err != nil {
		t.Fatal(err)
	}
	got, err := svc.Spreadsheets.Values.Get(id, "Sheet1").Do()
	if err != nil {
		t.Fatal(err)
	}
	if got.Range != "Sheet1!A1:Z1000" || len(got.Values) != 4 {
		t.Fatalf("range %q values %v", got.Range, got.Values)
	}
	assertRow(t, got.Values[1], []any{"7", "Bolt"})
	assertRow(t, got.Values[2], []any{})
	assertRow(t, got.Values[3], []any{"8", "Nut", "", "n"})
	if _, err := svc.Spreadsheets.Values.Clear(id, "Sheet1", &sheets.ClearValuesRequest{}).Do(); err != nil {
		t.Fatal(err)
	}
	empty, err := svc.Spreadsheets.Values.Get(id, "Sheet1").Do()
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := empty.MarshalJSON()
	if empty.Values != nil || containsKey(raw, "values") {
		t.Fatalf("empty tab must have no values key: %s", raw)
	}
}

func containsKey(raw []byte, key string) bool {
	return strings.Contains(string(raw), `"`+key+`"`)
}

func appendRow(svc *sheets.Service, id string, ctx context.Context, vals ...any) error {
	_, err := svc.Spreadsheets.Values.Append(id, "Sheet1", &sheets.ValueRange{Values: rows(vals)}).
		ValueInputOption("RAW").InsertDataOption("INSERT_ROWS").Context(ctx).Do()
	return err
}

func rowCount(t *testing.T, svc *sheets.Service, id string) int {
	t.Helper()
	got, err := svc.Spreadsheets.Values.Get(id, "Sheet1!A:A").Do()
	if err != nil {
		t.Fatal(err)
	}
	return len(got.Values)
}

func TestEmulatorC07_ApplyThen503AppliesWrite(t *testing.T) {
	emu, svc, id := newBookClient(t, Options{})
	emu.ScriptFaults(Fault{Kind: FaultApplyThen503, Match: MatchWrites})
	err := appendRow(svc, id, context.Background(), "12", "Bolt")
	if apiCode(t, err) != 503 {
		t.Fatalf("want 503, got %v", err)
	}
	if n := rowCount(t, svc, id); n != 1 {
		t.Fatalf("the write must have been applied once, rows = %d", n)
	}
}

func TestEmulatorC07_ApplyThenDropConnectionAppliesWrite(t *testing.T) {
	emu, svc, id := newBookClient(t, Options{})
	emu.ScriptFaults(Fault{Kind: FaultApplyThenDrop, Match: MatchWrites})
	err := appendRow(svc, id, context.Background(), "12", "Bolt")
	var gerr *googleapi.Error
	if err == nil || errors.As(err, &gerr) {
		t.Fatalf("want a transport error (connection dropped), got %v", err)
	}
	if n := rowCount(t, svc, id); n != 1 {
		t.Fatalf("the write must have been applied once, rows = %d", n)
	}
}

func TestEmulatorC07_ApplyThenHangPastClientTimeoutAppliesWrite(t *testing.T) {
	emu, svc, id := newBookClient(t, Options{})
	emu.ScriptFaults(Fault{Kind: FaultApplyThenHang, Match: MatchWrites})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := appendRow(svc, id, ctx, "12", "Bolt")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want client timeout, got %v", err)
	}
	if n := rowCount(t, svc, id); n != 1 {
		t.Fatalf("the write must have been applied once, rows = %d", n)
	}
}

func TestHangBeforeApplyAppliesNothingUntilReleased(t *testing.T) {
	emu, svc, id := newBookClient(t, Options{})
	emu.ScriptFaults(Fault{Kind: FaultHang, Match: MatchWrites})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := appendRow(svc, id, ctx, "x"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want timeout, got %v", err)
	}
	if n := rowCount(t, svc, id); n != 0 {
		t.Fatalf("a hang before apply must apply nothing, rows = %d", n)
	}
	release := make(chan struct{})
	close(release)
	emu.ScriptFaults(Fault{Kind: FaultHang, Release: release})
	if err := appendRow(svc, id, context.Background(), "y"); err != nil {
		t.Fatalf("released hang must proceed: %v", err)
	}
}

func TestEmulatorC08_429ThreeTimesThen500QuotaThenOK(t *testing.T) {
	emu, svc, id := newBookClient(t, Options{})
	quota := Fault{Kind: Fault429, Match: MatchWrites}
	emu.ScriptFaults(quota, quota, quota, Fault{Kind: Fault500, Match: MatchWrites,
		Message: "Quota exceeded for quota metric 'Write requests' and limit 'Write requests per minute per user' of service 'sheets.googleapis.com'."})
	for i := 0; i < 3; i++ {
		err := appendRow(svc, id, context.Background(), "r")
		var gerr *googleapi.Error
		if !errors.As(err, &gerr) || gerr.Code != 429 || gerr.Header.Get("Retry-After") == "" {
			t.Fatalf("attempt %d: want 429 with Retry-After, got %v", i, err)
		}
		if !strings.Contains(gerr.Message, "Quota exceeded for quota metric 'Write requests'") {
			t.Fatalf("429 message = %q", gerr.Message)
		}
	}
	err := appendRow(svc, id, context.Background(), "r")
	var gerr *googleapi.Error
	if !errors.As(err, &gerr) || gerr.Code != 500 || !strings.Contains(gerr.Message, "Quota exceeded") {
		t.Fatalf("want 500 Quota exceeded, got %v", err)
	}
	if err := appendRow(svc, id, context.Background(), "r"); err != nil {
		t.Fatalf("fifth attempt must succeed: %v", err)
	}
	if n := rowCount(t, svc, id); n != 1 {
		t.Fatalf("only the successful attempt writes, rows = %d", n)
	}
}

func TestEmulatorC09_RequestOverSizeLimitRejected(t *testing.T) {
	_, svc, id := newBookClient(t, Options{MaxRequestBytes: 1 << 10})
	big := make([][]any, 100)
	for i := range big {
		big[i] = []any{"0123456789abcdef", i}
	}
	_, err := svc.Spreadsheets.Values.Update(id, "Sheet1!A1", &sheets.ValueRange{Values: big}).ValueInputOption("RAW").Do()
	if apiCode(t, err) != 400 || !strings.Contains(err.Error(), "Request payload size exceeds the limit: 1024 bytes.") {
		t.Fatalf("want Google's 400 for a payload over the limit, got %v", err)
	}
	small := &sheets.ValueRange{Values: rows([]any{"ok"})}
	if _, err := svc.Spreadsheets.Values.Update(id, "Sheet1!A1", small).ValueInputOption("RAW").Do(); err != nil {
		t.Fatalf("small request must pass: %v", err)
	}
}

func TestCellOver50000CharactersRejected(t *testing.T) {
	_, svc, id := newBookClient(t, Options{})
	long := make([]byte, 50001)
	for i := range long {
		long[i] = 'x'
	}
	_, err := svc.Spreadsheets.Values.Update(id, "Sheet1!A1", &sheets.ValueRange{Values: rows([]any{string(long)})}).ValueInputOption("RAW").Do()
	var gerr *googleapi.Error
	if !errors.As(err, &gerr) || gerr.Code != 400 || gerr.Message != "Your input contains more than the maximum of 50000 characters in a single cell." {
		t.Fatalf("want 400 50000-character error, got %v", err)
	}
}
