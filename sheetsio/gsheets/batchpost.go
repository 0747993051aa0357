package gsheets

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"

	"google.golang.org/api/googleapi"
	"google.golang.org/api/sheets/v4"
)

// postBatchUpdate sends one spreadsheets.batchUpdate as sheets/v4's
// SpreadsheetsBatchUpdateCall.Do does (the same URL and query, fields
// when not empty, the same JSON, a failure as the same *googleapi.Error,
// the response decoded into the same type), over the provider's own
// authorised HTTP client (ctx's account's), with the body batchBodyRaw
// encodes in one pass with the appended rows of raw (batchjson.go). size
// hints the body's length; the body's bytes are counted in ctx's counter.
func (p *Provider) postBatchUpdate(ctx context.Context, id string, req *sheets.BatchUpdateSpreadsheetRequest, raw rawRows,
	fields string, size int) (*sheets.BatchUpdateSpreadsheetResponse, error) {
	body, err := batchBodyRaw(req, raw, size)
	if err != nil {
		return nil, err
	}
	countBytes(ctx, len(body)+1)
	q := url.Values{"alt": {"json"}, "prettyPrint": {"false"}}
	if fields != "" {
		q.Set("fields", fields)
	}
	u := p.base + "v4/spreadsheets/" + url.PathEscape(id) + ":batchUpdate?" + q.Encode()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(append(body, '\n')))
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("User-Agent", googleapi.UserAgent)
	res, err := p.httpOf(ctx).Do(hr)
	if err != nil {
		if ctx.Err() != nil { // as sheets/v4: the context's error is the more useful
			return nil, ctx.Err()
		}
		return nil, err
	}
	defer googleapi.CloseBody(res)
	if err := googleapi.CheckResponse(res); err != nil {
		return nil, err
	}
	return decodeBatchResponse(res)
}

// decodeBatchResponse decodes a batchUpdate's response as sheets/v4 does.
func decodeBatchResponse(res *http.Response) (*sheets.BatchUpdateSpreadsheetResponse, error) {
	ret := &sheets.BatchUpdateSpreadsheetResponse{ServerResponse: googleapi.ServerResponse{
		Header: res.Header, HTTPStatusCode: res.StatusCode}}
	if res.StatusCode == http.StatusNoContent {
		return ret, nil
	}
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &ret); err != nil {
		return nil, err
	}
	return ret, nil
}
