package sheetsio

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"google.golang.org/api/googleapi"
	"google.golang.org/api/sheets/v4"
)

// defaultBase is Google's Sheets API root (Config.Endpoint overrides it).
const defaultBase = "https://sheets.googleapis.com/"

// streamBatchGetByDataFilter is values.batchGetByDataFilter with its
// response decoded from the wire row by row: no copy of the whole body
// (the generated client reads it all first) and every row allocated at its
// own size once (the generated client grows each row cell by cell, then
// the snapshot copied it). The request is the sheets/v4 type, sent over
// the provider's own authorised HTTP client; a failure is the same
// *googleapi.Error the generated client returns, so reads classify it the
// same way.
func (p *Provider) streamBatchGetByDataFilter(ctx context.Context, id string,
	req *sheets.BatchGetValuesByDataFilterRequest) (*sheets.BatchGetValuesByDataFilterResponse, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	u := p.base + "v4/spreadsheets/" + url.PathEscape(id) + "/values:batchGetByDataFilter?alt=json&prettyPrint=false"
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Content-Type", "application/json")
	res, err := p.hc.Do(hr)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if err := googleapi.CheckResponse(res); err != nil {
		return nil, err
	}
	return decodeFilteredValues(res.Body)
}

// baseURL is the API root requests go to, with a trailing slash.
func baseURL(cfg Config) string {
	if cfg.Endpoint == "" {
		return defaultBase
	}
	return strings.TrimSuffix(cfg.Endpoint, "/") + "/"
}

// decodeFilteredValues decodes a BatchGetValuesByDataFilterResponse:
// {"spreadsheetId": …, "valueRanges": [{"valueRange": {"range": …,
// "majorDimension": …, "values": [[…], …]}, "dataFilters": […]}, …]}.
// Fields it does not use are skipped. Cells decode as the generated client
// decodes them (string, float64, bool, nil).
func decodeFilteredValues(r io.Reader) (*sheets.BatchGetValuesByDataFilterResponse, error) {
	d := &valuesDecoder{dec: json.NewDecoder(r)}
	out := &sheets.BatchGetValuesByDataFilterResponse{}
	err := d.object(func(key string) error {
		switch key {
		case "spreadsheetId":
			return d.dec.Decode(&out.SpreadsheetId)
		case "valueRanges":
			return d.array(func() error {
				m := &sheets.MatchedValueRange{}
				out.ValueRanges = append(out.ValueRanges, m)
				return d.matched(m)
			})
		}
		return d.skip()
	})
	if err != nil {
		return nil, fmt.Errorf("%w: values response: %w", ErrReadUnavailable, err)
	}
	return out, nil
}

// valuesDecoder walks a values response token by token.
type valuesDecoder struct {
	dec *json.Decoder
	row []any // the row being decoded (reused; each row is copied out at its size)
}

// matched decodes one MatchedValueRange (its data filters are skipped).
func (d *valuesDecoder) matched(m *sheets.MatchedValueRange) error {
	return d.object(func(key string) error {
		if key != "valueRange" {
			return d.skip()
		}
		m.ValueRange = &sheets.ValueRange{}
		return d.valueRange(m.ValueRange)
	})
}

// valueRange decodes one ValueRange, its values row by row.
func (d *valuesDecoder) valueRange(v *sheets.ValueRange) error {
	return d.object(func(key string) error {
		switch key {
		case "range":
			return d.dec.Decode(&v.Range)
		case "majorDimension":
			return d.dec.Decode(&v.MajorDimension)
		case "values":
			return d.array(func() error {
				if err := d.dec.Decode(&d.row); err != nil {
					return err
				}
				v.Values = append(v.Values, append(make([]any, 0, len(d.row)), d.row...))
				clear(d.row)
				return nil
			})
		}
		return d.skip()
	})
}

// object reads a JSON object, calling field for each key with the
// decoder positioned at its value (which field must consume).
func (d *valuesDecoder) object(field func(key string) error) error {
	t, err := d.dec.Token()
	if err != nil || t == nil {
		return err // null is an empty object
	}
	if t != json.Delim('{') {
		return fmt.Errorf("want an object, got %v", t)
	}
	for d.dec.More() {
		t, err := d.dec.Token()
		if err != nil {
			return err
		}
		key, ok := t.(string)
		if !ok {
			return fmt.Errorf("object key %v", t)
		}
		if err := field(key); err != nil {
			return err
		}
	}
	return d.delim('}')
}

// array reads a JSON array, calling elem for each element (which elem
// must consume). null is an empty array.
func (d *valuesDecoder) array(elem func() error) error {
	t, err := d.dec.Token()
	if err != nil || t == nil {
		return err
	}
	if t != json.Delim('[') {
		return fmt.Errorf("want an array, got %v", t)
	}
	for d.dec.More() {
		if err := elem(); err != nil {
			return err
		}
	}
	return d.delim(']')
}

func (d *valuesDecoder) delim(want json.Delim) error {
	t, err := d.dec.Token()
	if err != nil {
		return err
	}
	if t != want {
		return fmt.Errorf("want %v, got %v", want, t)
	}
	return nil
}

// skip consumes one value of any kind.
func (d *valuesDecoder) skip() error {
	var raw json.RawMessage
	return d.dec.Decode(&raw)
}
