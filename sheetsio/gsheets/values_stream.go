package gsheets

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
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
//
// A value range with a digestRange (by index; nil or short: none) is
// certified by its RowCheck as it streams: certified[i] reports it, and
// then its Values hold the header row only. A value range columns marks
// (by index; short: none) is one column, kept as strings (valuesRead.columns).
func (p *Provider) streamBatchGetByDataFilter(ctx context.Context, id string, req *sheets.BatchGetValuesByDataFilterRequest,
	ranges []*digestRange, columns []bool, known sheetsio.BodyDigest) (valuesRead, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return valuesRead{}, err
	}
	u := p.base + "v4/spreadsheets/" + url.PathEscape(id) + "/values:batchGetByDataFilter?alt=json&prettyPrint=false"
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return valuesRead{}, err
	}
	hr.Header.Set("Content-Type", "application/json")
	res, err := p.send(hr)
	if err != nil {
		return valuesRead{}, err
	}
	defer res.Body.Close()
	h := sha256.New()
	digestBytes(h, body)
	if !known.IsZero() {
		d, err := digestAll(res.Body, h)
		return valuesRead{body: d, known: d == known}, err
	}
	tee := io.TeeReader(res.Body, h)
	v := valuesRead{}
	if v.resp, v.certified, v.columns, err = decodeFiltered(tee, ranges, columns); err != nil {
		return valuesRead{}, err
	}
	v.body = rest(tee, h)
	return v, nil
}

// valuesRead is one values.batchGetByDataFilter: its response and which
// ranges their RowCheck certified (nil when not decoded), the ranges read
// as a column of strings (by index; their Values are empty), its digest
// (the request body, then the response body) and, with a known digest,
// whether the read had it (then nothing was decoded).
type valuesRead struct {
	resp      *sheets.BatchGetValuesByDataFilterResponse
	certified []bool
	columns   [][]string
	body      sheetsio.BodyDigest
	known     bool
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
func decodeFilteredValues(r io.Reader, ranges []*digestRange) (*sheets.BatchGetValuesByDataFilterResponse, []bool, error) {
	resp, certified, _, err := decodeFiltered(r, ranges, nil)
	return resp, certified, err
}

// decodeFiltered is decodeFilteredValues that also keeps each value range
// columns marks (by index) as one string a row (columnCell), leaving its
// Values empty: an anchor column of 171,075 rows is then 171,075 strings,
// not as many one-cell rows ([]any: a slice, a cell and a boxed string a
// row) held until the anchors are indexed.
func decodeFiltered(r io.Reader, ranges []*digestRange, columns []bool) (*sheets.BatchGetValuesByDataFilterResponse, []bool, [][]string, error) {
	d := &valuesDecoder{dec: json.NewDecoder(r)}
	out := &sheets.BatchGetValuesByDataFilterResponse{}
	certified := make([]bool, len(ranges))
	cols := make([][]string, len(columns))
	err := d.object(func(key string) error {
		switch key {
		case "spreadsheetId":
			return d.dec.Decode(&out.SpreadsheetId)
		case "valueRanges":
			return d.array(func() error {
				m, i := &sheets.MatchedValueRange{}, len(out.ValueRanges)
				out.ValueRanges = append(out.ValueRanges, m)
				if i < len(columns) && columns[i] {
					return d.column(m, &cols[i])
				}
				if i < len(ranges) && ranges[i] != nil {
					return d.matched(m, ranges[i], &certified[i])
				}
				return d.matched(m, nil, nil)
			})
		}
		return d.skip()
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w: values response: %w", sheetsio.ErrReadUnavailable, err)
	}
	return out, certified, cols, nil
}

// column decodes one MatchedValueRange of a single column (its data
// filters are skipped) into col, one string a row (columnCell); its
// ValueRange keeps its range and dimension, no values.
func (d *valuesDecoder) column(m *sheets.MatchedValueRange, col *[]string) error {
	return d.object(func(key string) error {
		if key != "valueRange" {
			return d.skip()
		}
		v := &sheets.ValueRange{}
		m.ValueRange = v
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
					*col = append(*col, columnCell(d.row))
					clear(d.row)
					return nil
				})
			}
			return d.skip()
		})
	})
}

// columnCell is a row's first cell when it is text, else "" (an empty
// row, a number, a boolean: no anchor).
func columnCell(row []any) string {
	if len(row) == 0 {
		return ""
	}
	s, _ := row[0].(string)
	return s
}

// valuesDecoder walks a values response token by token.
type valuesDecoder struct {
	dec *json.Decoder
	row []any           // the row being decoded (reused; each row is copied out at its size)
	raw json.RawMessage // the row being digested (reused)
	dg  cell.RowDigester
}

// matched decodes one MatchedValueRange (its data filters are skipped),
// certifying it with dr when not nil (*certified reports the outcome).
func (d *valuesDecoder) matched(m *sheets.MatchedValueRange, dr *digestRange, certified *bool) error {
	return d.object(func(key string) error {
		if key != "valueRange" {
			return d.skip()
		}
		m.ValueRange = &sheets.ValueRange{}
		if dr == nil {
			return d.valueRange(m.ValueRange, nil)
		}
		if err := d.valueRange(m.ValueRange, dr); err != nil {
			return err
		}
		if *certified = dr.certified(len(m.ValueRange.Values) > 0); *certified {
			return nil
		}
		var err error
		m.ValueRange.Values, err = dr.arena.decode(m.ValueRange.Values)
		return err
	})
}

// valueRange decodes one ValueRange, its values row by row: with dr, the
// header row only, the data rows going to dr.
func (d *valuesDecoder) valueRange(v *sheets.ValueRange, dr *digestRange) error {
	return d.object(func(key string) error {
		switch key {
		case "range":
			return d.dec.Decode(&v.Range)
		case "majorDimension":
			return d.dec.Decode(&v.MajorDimension)
		case "values":
			return d.array(func() error {
				if dr != nil && len(v.Values) > 0 {
					if err := d.dec.Decode(&d.raw); err != nil {
						return err
					}
					dr.row(&d.dg, d.raw)
					return nil
				}
				if err := d.dec.Decode(&d.row); err != nil {
					return err
				}
				v.Values = append(v.Values, append(make([]any, 0, len(d.row)), d.row...))
				clear(d.row)
				if dr != nil {
					dr.header(v.Values[0])
				}
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
