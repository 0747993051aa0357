package gsheets

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"

	"google.golang.org/api/googleapi"
	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// wireRecorder answers every request with status and reply, and keeps
// what it was sent.
type wireRecorder struct {
	mu     sync.Mutex
	status int
	reply  string
	seen   []sentRequest
}

type sentRequest struct {
	method, path, query, contentType string
	body                             []byte
}

func (w *wireRecorder) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.mu.Lock()
	w.seen = append(w.seen, sentRequest{r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Get("Content-Type"), body})
	w.mu.Unlock()
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(w.status)
	_, _ = io.WriteString(rw, w.reply)
}

// TestPostBatchUpdateSendsWhatSheetsV4Sends: the same batchUpdate sent by
// sheets/v4's call and by postBatchUpdate reaches the server as the same
// method, path, query, content type and body, and its answer — a
// response, or an error Sheets explains — comes back as the same value.
func TestPostBatchUpdateSendsWhatSheetsV4Sends(t *testing.T) {
	spec := layout.TabSpec{Columns: []cell.Column{{Kind: cell.String}, {Kind: cell.Float}, {Kind: cell.Time}, {Kind: cell.Bool}}}
	req := &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{
		appendCellsRequest(3, []*sheets.RowData{rowData(spec, []any{"Zürich <&> \u2028", 1e21, 45000.25, true})}),
		deleteRowRequest(3, 7)}, IncludeSpreadsheetInResponse: true, ResponseRanges: []string{"City!A2:D2"}}
	for _, answer := range []struct {
		status int
		reply  string
	}{
		{200, `{"spreadsheetId":"x","replies":[{},{}],"updatedSpreadsheet":{"sheets":[{"properties":{"sheetId":3}}]}}`},
		{400, `{"error":{"code":400,"message":"Invalid requests[0]","status":"INVALID_ARGUMENT"}}`},
		{503, `<html>unavailable</html>`},
	} {
		rec := &wireRecorder{status: answer.status, reply: answer.reply}
		srv := httptest.NewServer(rec)
		p, err := New(context.Background(), Config{Endpoint: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		theirs, theirErr := p.svcOf(context.Background()).Spreadsheets.BatchUpdate(testSheetID, req).Fields(gridFieldsWritten).Context(context.Background()).Do()
		ours, ourErr := p.postBatchUpdate(context.Background(), testSheetID, req, nil, gridFieldsWritten, 0)
		srv.Close()
		sameWire(t, rec.seen)
		sameAnswer(t, answer.status, theirs, ours, theirErr, ourErr)
	}
}

func sameWire(t *testing.T, seen []sentRequest) {
	t.Helper()
	if len(seen) != 2 {
		t.Fatalf("%d requests, want 2", len(seen))
	}
	a, b := seen[0], seen[1]
	if a.method != b.method || a.path != b.path || a.query != b.query || a.contentType != b.contentType || !bytes.Equal(a.body, b.body) {
		t.Fatalf("sheets/v4 sent %s %s?%s (%s)\n%s\nours %s %s?%s (%s)\n%s",
			a.method, a.path, a.query, a.contentType, a.body, b.method, b.path, b.query, b.contentType, b.body)
	}
}

func sameAnswer(t *testing.T, status int, theirs, ours *sheets.BatchUpdateSpreadsheetResponse, theirErr, ourErr error) {
	t.Helper()
	if theirErr != nil || ourErr != nil {
		var g1, g2 *googleapi.Error
		if !errors.As(theirErr, &g1) || !errors.As(ourErr, &g2) {
			t.Fatalf("status %d: errors %v / %v", status, theirErr, ourErr)
		}
		w1, w2 := ClassifyWrite(theirErr), ClassifyWrite(ourErr)
		if g1.Code != g2.Code || g1.Message != g2.Message || g1.Body != g2.Body ||
			w1.Outcome != w2.Outcome || w1.Code != w2.Code || w1.Status != w2.Status {
			t.Fatalf("status %d: sheets/v4 %v (%v %s), ours %v (%v %s)", status, g1, w1.Outcome, w1.Code, g2, w2.Outcome, w2.Code)
		}
		return
	}
	theirs.Header, ours.Header = nil, nil // Date may differ
	if !reflect.DeepEqual(theirs, ours) {
		t.Fatalf("responses differ:\n%+v\n%+v", theirs, ours)
	}
}
